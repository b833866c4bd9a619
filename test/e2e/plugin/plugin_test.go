package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Ages are hours or days old, so that the printed age holds while a test runs.
var _ = Describe("volumes", func() {
	var shop, web string

	BeforeEach(func(ctx context.Context) {
		// The hub lists every namespace's volumes in the order of the namespaces' names.
		shop, web = namespace(ctx, "shop"), namespace(ctx, "web")
		volume(ctx, shop, "data", storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Owned, StorageClassName: "fast", Domain: "east", VolumeName: "pv-data",
			Owner: "k1", Phase: storagev1alpha1.Moving, PhaseSince: ago(26 * time.Hour),
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonWaitingForDetach,
		})
		volume(ctx, shop, "logs", storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Internal, StorageClassName: "local", VolumeName: "pv-logs",
			Owner: "k2", Phase: storagev1alpha1.Bound, PhaseSince: ago(50 * time.Hour),
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonInUse,
		})
		volume(ctx, web, "assets", storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Shared, StorageClassName: "nfs", Domain: "east", VolumeName: "pv-assets",
			Owner: "k1", Sharers: []string{"k2", "k3"}, Phase: storagev1alpha1.Bound, PhaseSince: ago(10 * 24 * time.Hour),
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimRetain, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonInUse,
		})
	})

	header := []string{"NAME", "CLASS", "OWNER", "SHARERS", "PHASE", "SINCE", "RECLAIM"}
	data := []string{"data", "Owned", "k1", "<none>", "Moving", "26h", "Retain"}
	logs := []string{"logs", "Internal", "k2", "<none>", "Bound", "2d2h", "Retain"}
	assets := []string{"assets", "Shared", "k1", "k2,k3", "Bound", "10d", "Retain"}

	It("lists the volumes of the namespace given by -n", func(ctx context.Context) {
		Expect(table(succeeds(custody(ctx, "volumes", "-n", shop)))).To(Equal([][]string{header, data, logs}))
		Expect(table(succeeds(custody(ctx, "volumes", "--namespace", web)))).To(Equal([][]string{header, assets}))
	})

	It("lists the volumes of the kubeconfig's namespace by default", func(ctx context.Context) {
		Expect(table(succeeds(custodyWith(ctx, kubeconfig(web, ""), "volumes")))).To(Equal([][]string{header, assets}))
	})

	It("lists the volumes of every namespace with -A, with a NAMESPACE column", func(ctx context.Context) {
		Expect(table(succeeds(custody(ctx, "volumes", "-A")))).To(Equal([][]string{
			append([]string{"NAMESPACE"}, header...),
			append([]string{shop}, data...),
			append([]string{shop}, logs...),
			append([]string{web}, assets...),
		}))
	})

	It("adds storage class, domain, volume and reason with -o wide", func(ctx context.Context) {
		Expect(table(succeeds(custody(ctx, "volumes", "-n", shop, "-o", "wide")))).To(Equal([][]string{
			append(header, "STORAGECLASS", "DOMAIN", "VOLUME", "REASON"),
			append(data, "fast", "east", "pv-data", "WaitingForDetach"),
			append(logs, "local", "<none>", "pv-logs", "InUse"),
		}))
	})

	It("prints the VolumeOwnerships as a List with -o json and -o yaml", func(ctx context.Context) {
		for _, format := range []string{"json", "yaml"} {
			out := succeeds(custody(ctx, "volumes", "-n", shop, "-o", format))
			Expect(out).NotTo(ContainSubstring("managedFields"))
			var list struct {
				APIVersion string                            `json:"apiVersion"`
				Kind       string                            `json:"kind"`
				Items      []storagev1alpha1.VolumeOwnership `json:"items"`
			}
			Expect(yaml.Unmarshal([]byte(out), &list)).To(Succeed(), format)
			Expect(list.APIVersion + " " + list.Kind).To(Equal("v1 List"))
			Expect(list.Items).To(HaveLen(2))
			for i, name := range []string{"data", "logs"} {
				v := list.Items[i]
				Expect(v.APIVersion + " " + v.Kind).To(Equal("storage.custody.dev/v1alpha1 VolumeOwnership"))
				Expect(v.Namespace + "/" + v.Name).To(Equal(shop + "/" + name))
			}
			Expect(list.Items[0].Status.Owner).To(Equal("k1"))
			Expect(list.Items[0].Status.Reason).To(Equal(storagev1alpha1.ReasonWaitingForDetach))
			Expect(list.Items[1].Status.Class).To(Equal(storagev1alpha1.Internal))
		}
	})

	It("lists with --retained the hub PVs that deleted claims of the namespace left Released", func(ctx context.Context) {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "kept-" + shop, Annotations: map[string]string{
				storagev1alpha1.DomainAnnotation: "east", storagev1alpha1.LastOwnerAnnotation: "k1"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName:       "fast",
				ClaimRef:               &corev1.ObjectReference{Namespace: shop, Name: "old"},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}},
			},
		}
		Expect(hub.Create(ctx, pv)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, pv)).To(Succeed()) })
		pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased, LastPhaseTransitionTime: ago(26 * time.Hour)}
		Expect(hub.Status().Update(ctx, pv)).To(Succeed())

		Expect(table(succeeds(custody(ctx, "volumes", "--retained", "-n", shop)))).To(Equal([][]string{
			{"NAME", "CLAIM", "CAPACITY", "STORAGECLASS", "DOMAIN", "LAST OWNER", "SINCE"},
			{pv.Name, shop + "/old", "10Gi", "fast", "east", "k1", "26h"},
		}))
		Expect(custody(ctx, "volumes", "--retained", "-n", web).errOut).To(Equal(fmt.Sprintf("No resources found in %s namespace.\n", web)))
		var list corev1.PersistentVolumeList
		Expect(yaml.Unmarshal([]byte(succeeds(custody(ctx, "volumes", "--retained", "-A", "-o", "json"))), &list)).To(Succeed())
		Expect(list.Items).To(ContainElement(HaveField("ObjectMeta.Name", pv.Name)))
	})

	It("says there are none in a namespace without volumes", func(ctx context.Context) {
		empty := namespace(ctx, "empty")
		r := custody(ctx, "volumes", "-n", empty)
		Expect(r.code).To(Equal(0))
		Expect(r.out).To(BeEmpty())
		Expect(r.errOut).To(Equal(fmt.Sprintf("No resources found in %s namespace.\n", empty)))
		Expect(json.Valid([]byte(succeeds(custody(ctx, "volumes", "-n", empty, "-o", "json"))))).To(BeTrue())
	})
})

var _ = Describe("targets", func() {
	It("lists each target with its key, Locations, readiness, cordon, heartbeat and domains", func(ctx context.Context) {
		east, zoneB := id("east"), id("zone-b")
		location(ctx, east, map[string]string{"loc": "east"})
		location(ctx, zoneB, map[string]string{"zone": "b"})
		a, b, c := id("a"), id("b"), id("c")
		target(ctx, a, map[string]string{"loc": "east"},
			workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}}, "ka", metav1.ConditionTrue, ago(26*time.Hour))
		target(ctx, b, map[string]string{"loc": "east", "zone": "b"},
			workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}, Unschedulable: true, Priority: 5}, "kb", metav1.ConditionFalse, ago(50*time.Hour))
		target(ctx, c, nil, workloadv1alpha1.SyncTargetSpec{Evict: true}, "", "", nil)

		header := []string{"NAME", "KEY", "LOCATIONS", "READY", "LAST HEARTBEAT", "DOMAINS"}
		rows := [][]string{
			{a, "ka", east, "True", "26h", "east"},
			{b, "kb", east + "," + zoneB, "False,Cordoned", "2d2h", "east,west"},
			{c, "<none>", "<none>", "Unknown,Evicting", "<unknown>", "<none>"},
		}
		Expect(table(succeeds(custody(ctx, "targets")))).To(Equal(append([][]string{header}, rows...)))

		By("adding the Ready reason, priority and storage classes with -o wide")
		wideRows := [][]string{append(header, "REASON", "PRIORITY", "STORAGECLASSES")}
		for i, extra := range [][]string{{"Heartbeating", "1", "<none>"}, {"Unreachable", "5", "<none>"}, {"<none>", "1", "<none>"}} {
			wideRows = append(wideRows, append(rows[i], extra...))
		}
		Expect(table(succeeds(custody(ctx, "targets", "-o", "wide")))).To(Equal(wideRows))

		By("printing the names with -o name")
		Expect(succeeds(custody(ctx, "targets", "-o", "name"))).To(Equal(fmt.Sprintf(
			"synctarget.workload.custody.dev/%s\nsynctarget.workload.custody.dev/%s\nsynctarget.workload.custody.dev/%s\n", a, b, c)))
	})

	It("says there are none on a hub without targets", func(ctx context.Context) {
		r := custody(ctx, "targets")
		Expect(r.code).To(Equal(0))
		Expect(r.out).To(BeEmpty())
		Expect(r.errOut).To(Equal("No resources found\n"))
	})
})

var _ = Describe("describe volume", func() {
	It("prints the volume's fields and its transitions with their reasons", func(ctx context.Context) {
		ns := namespace(ctx, "shop")
		since := ago(50 * time.Hour)
		at := func(s string) metav1.Time {
			t, err := time.Parse(time.RFC3339, s)
			Expect(err).NotTo(HaveOccurred())
			return metav1.NewTime(t)
		}
		volume(ctx, ns, "data", storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Owned, StorageClassName: "fast", Domain: "east", VolumeName: "pv-data",
			Owner: "k2", Phase: storagev1alpha1.Bound, PhaseSince: since,
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonMoved, Message: "moved from k1 to k2",
			Transitions: []storagev1alpha1.Transition{
				{Phase: storagev1alpha1.Provisioning, Time: at("2026-03-01T10:00:00Z"), Owner: "k1", Reason: storagev1alpha1.ReasonProvisioning, Message: "provisioning on k1"},
				{Phase: storagev1alpha1.Bound, Time: at("2026-03-01T10:00:07Z"), Owner: "k1", Reason: storagev1alpha1.ReasonInUse},
				{Phase: storagev1alpha1.Moving, Time: at("2026-03-02T08:30:00Z"), Owner: "k1", Reason: storagev1alpha1.ReasonWaitingForDetach, Message: "waiting for k1 to let go of the volume"},
				{Phase: storagev1alpha1.Bound, Time: at("2026-03-02T08:31:12Z"), Owner: "k2", Reason: storagev1alpha1.ReasonMoved, Message: "moved from k1 to k2"},
			},
		})
		fields := []string{
			"Name:               data",
			"Namespace:          " + ns,
			"Class:              Owned",
			"StorageClass:       fast",
			"Domain:             east",
			"Volume:             pv-data",
			"Owner:              k2",
			"Sharers:            <none>",
			"Fenced Off:         <none>",
			"Replica:            <none>",
			"Restored From:      <none>",
			"Set Aside:          <none>",
			"Earlier Set Aside:  <none>",
			"Phase:              Bound",
			"Since:              " + since.UTC().Format(time.RFC3339) + " (2d2h ago)",
			"Reclaim:            Retain",
			"Original Reclaim:   Delete",
			"Reason:             Moved",
			"Message:            moved from k1 to k2",
			"Conditions:         <none>",
			"Transitions:",
		}
		transitions := [][]string{
			{"Time", "Phase", "Owner", "Reason", "Message"},
			{"----", "-----", "-----", "------", "-------"},
			{"2026-03-01T10:00:00Z", "Provisioning", "k1", "Provisioning", "provisioning on k1"},
			{"2026-03-01T10:00:07Z", "Bound", "k1", "InUse", "<none>"},
			{"2026-03-02T08:30:00Z", "Moving", "k1", "WaitingForDetach", "waiting for k1 to let go of the volume"},
			{"2026-03-02T08:31:12Z", "Bound", "k2", "Moved", "moved from k1 to k2"},
		}
		for _, args := range [][]string{{"describe", "volume", ns + "/data"}, {"describe", "vo", "data", "-n", ns}} {
			out := succeeds(custody(ctx, args...))
			lines := strings.SplitAfterN(out, "Transitions:\n", 2)
			Expect(lines).To(HaveLen(2), out)
			Expect(strings.Split(lines[0], "\n")).To(Equal(append(fields, "")), strings.Join(args, " "))
			Expect(table(lines[1])).To(Equal(transitions), strings.Join(args, " "))
		}
	})
})

var _ = Describe("cordon and uncordon", func() {
	It("set and clear the target's spec.unschedulable and leave the rest of its spec", func(ctx context.Context) {
		name := id("m")
		target(ctx, name, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}, Priority: 7}, "km", metav1.ConditionTrue, ago(26*time.Hour))
		cordoned := func() bool { return getTarget(ctx, name).Spec.Unschedulable }

		Expect(succeeds(custody(ctx, "cordon", name))).To(Equal("synctarget/" + name + " cordoned\n"))
		Expect(cordoned()).To(BeTrue())
		t := getTarget(ctx, name)
		Expect(t.Spec.StorageDomains).To(Equal([]string{"east"}))
		Expect(t.Spec.Priority).To(Equal(int32(7)))
		Expect(table(succeeds(custody(ctx, "targets")))[1][3]).To(Equal("True,Cordoned"))
		Expect(succeeds(custody(ctx, "cordon", name))).To(Equal("synctarget/" + name + " already cordoned\n"))
		Expect(cordoned()).To(BeTrue())

		Expect(succeeds(custody(ctx, "uncordon", name))).To(Equal("synctarget/" + name + " uncordoned\n"))
		Expect(cordoned()).To(BeFalse())
		Expect(table(succeeds(custody(ctx, "targets")))[1][3]).To(Equal("True"))
		Expect(succeeds(custody(ctx, "uncordon", name))).To(Equal("synctarget/" + name + " already uncordoned\n"))
		Expect(cordoned()).To(BeFalse())
	})
})

var _ = Describe("bad input", func() {
	DescribeTable("gets a one-line error and exit code 1",
		func(ctx context.Context, args []string, message string) {
			failsWith(custody(ctx, args...), message)
		},
		Entry("cordon of an unknown target", []string{"cordon", "nowhere"}, `synctarget "nowhere" not found`),
		Entry("uncordon of an unknown target", []string{"uncordon", "nowhere"}, `synctarget "nowhere" not found`),
		Entry("cordon without a target", []string{"cordon"}, "accepts 1 arg(s), received 0"),
		Entry("an unknown volume", []string{"describe", "volume", "default/nothing"}, `volume "default/nothing" not found`),
		Entry("an unknown volume in the kubeconfig's namespace", []string{"describe", "volume", "nothing"}, `volume "default/nothing" not found`),
		Entry("NS/NAME with two slashes", []string{"describe", "volume", "shop/data/1"}, `invalid volume "shop/data/1": give NAMESPACE/NAME or NAME`),
		Entry("NS/NAME without a namespace", []string{"describe", "volume", "/data"}, `invalid volume "/data": give NAMESPACE/NAME or NAME`),
		Entry("NS/NAME without a name", []string{"describe", "volume", "shop/"}, `invalid volume "shop/": give NAMESPACE/NAME or NAME`),
		Entry("NS/NAME with an invalid namespace", []string{"describe", "volume", "Shop/data"},
			`invalid volume "Shop/data": namespace "Shop": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`),
		Entry("NS/NAME against another --namespace", []string{"describe", "volume", "shop/data", "-n", "web"}, `volume "shop/data" is not in namespace "web" given by --namespace`),
		Entry("describe of something else", []string{"describe", "target", "m1"}, `unknown command "target" for "kubectl custody describe"`),
		Entry("describe of nothing", []string{"describe"}, `name what to describe, as in "kubectl custody describe volume NAMESPACE/NAME", "kubectl custody describe fence NAME" or "kubectl custody describe pair NAME"`),
		Entry("an unknown Fence", []string{"describe", "fence", "nowhere.east"}, `fence "nowhere.east" not found`),
		Entry("fence without --powered-off", []string{"fence", "m1"},
			"network fencing is automatic: the hub fences a lost target that has spec.fencing by itself; --powered-off states that the member of m1 is powered off and cannot reach its storage"),
		Entry("fence of an unknown target", []string{"fence", "nowhere", "--powered-off"}, `synctarget "nowhere" not found`),
		Entry("fence without a target", []string{"fence", "--powered-off"}, "accepts 1 arg(s), received 0"),
		Entry("unfence of an unknown target", []string{"unfence", "nowhere"}, `synctarget "nowhere" not found`),
		Entry("fence --yes of an unknown target", []string{"fence", "nowhere", "--powered-off", "--yes"}, `synctarget "nowhere" not found`),
		Entry("fence --dry-run of an unknown target", []string{"fence", "nowhere", "--powered-off", "--dry-run"}, `synctarget "nowhere" not found`),
		Entry("unfence --dry-run of an unknown target", []string{"unfence", "nowhere", "--dry-run"}, `synctarget "nowhere" not found`),
		Entry("unjoin of an unknown target", []string{"unjoin", "nowhere"}, `synctarget "nowhere" not found`),
		Entry("unjoin --force of an unknown target", []string{"unjoin", "nowhere", "--force"}, `synctarget "nowhere" not found`),
		Entry("unjoin --dry-run of an unknown target", []string{"unjoin", "nowhere", "--dry-run"}, `synctarget "nowhere" not found`),
		Entry("an unknown command", []string{"cordn", "m1"}, `unknown command "cordn" for "kubectl custody" Did you mean this? cordon`),
		Entry("an unknown flag", []string{"volumes", "--every"}, "unknown flag: --every"),
		Entry("an unknown output format", []string{"volumes", "-o", "table"},
			`unknown output format "table": use one of wide, json, yaml, kyaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file`),
	)

	It("reports a missing kubeconfig", func(ctx context.Context) {
		missing := filepath.Join(GinkgoT().TempDir(), "missing.kubeconfig")
		for _, args := range [][]string{{"volumes"}, {"targets"}, {"fences"}, {"describe", "volume", "shop/data"}, {"describe", "fence", "m1.east"},
			{"cordon", "m1"}, {"fence", "m1", "--powered-off"}, {"unfence", "m1"}} {
			failsWith(custodyWith(ctx, missing, args...), "loading the kubeconfig: stat "+missing+": no such file or directory")
		}
	})

	It("reports an unreachable hub", func(ctx context.Context) {
		addr := closedPort()
		closed := kubeconfig("", "https://"+addr)
		for _, args := range [][]string{{"volumes"}, {"volumes", "-A", "-o", "json"}, {"targets"}, {"fences"}, {"describe", "volume", "shop/data"},
			{"describe", "fence", "m1.east"}, {"cordon", "m1"}, {"uncordon", "m1"}, {"fence", "m1", "--powered-off"}, {"unfence", "m1"}} {
			failsWith(custodyWith(ctx, closed, args...),
				fmt.Sprintf("cannot reach the hub at https://%s: dial tcp %s: connect: connection refused", addr, addr))
		}
	})
})
