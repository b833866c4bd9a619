package plugin

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/cmd/kubectl-custody/app"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// result is what one run of kubectl custody printed, and its exit code.
type result struct {
	code        int
	out, errOut string
}

// custody runs kubectl custody in-process against the hub, with nothing on stdin: a command
// that asks for confirmation is answered no.
func custody(ctx context.Context, args ...string) result {
	return run(ctx, bed.Hub.Kubeconfig, "", args...)
}

// custodyWith runs kubectl custody in-process with the given kubeconfig.
func custodyWith(ctx context.Context, kubeconfig string, args ...string) result {
	return run(ctx, kubeconfig, "", args...)
}

// answering runs kubectl custody in-process against the hub, with answer on stdin.
func answering(ctx context.Context, answer string, args ...string) result {
	return run(ctx, bed.Hub.Kubeconfig, answer, args...)
}

// run runs kubectl custody in-process with the given kubeconfig and stdin.
func run(ctx context.Context, kubeconfig, stdin string, args ...string) result {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	code := app.Run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), streams)
	// Shown when a spec fails, or always with -ginkgo.v.
	GinkgoWriter.Printf("$ kubectl custody %s\n%s%s(exit %d)\n", strings.Join(args, " "), out.String(), errOut.String(), code)
	return result{code: code, out: out.String(), errOut: errOut.String()}
}

// succeeds checks that a run exited 0 with nothing on stderr and returns its stdout.
func succeeds(r result) string {
	GinkgoHelper()
	Expect(r.errOut).To(BeEmpty())
	Expect(r.code).To(Equal(0))
	return r.out
}

// failsWith checks that a run exited 1 and printed the one line "error: <message>" on stderr
// and nothing on stdout: no usage, no stack trace.
func failsWith(r result, message string) {
	GinkgoHelper()
	Expect(r.out).To(BeEmpty())
	Expect(strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n")).To(HaveLen(1), "stderr is one line: %q", r.errOut)
	Expect(r.errOut).NotTo(Or(ContainSubstring("Usage:"), ContainSubstring("goroutine ")))
	Expect(r.errOut).To(Equal("error: " + message + "\n"))
	Expect(r.code).To(Equal(1))
}

var headerColumn = regexp.MustCompile(`\S+( \S+)*`)

// table splits kubectl's table output into cells. Each line is cut where the header's column
// names start, so that a value printed in the wrong column, or pushing its neighbour off its
// column, changes the cells.
func table(out string) [][]string {
	GinkgoHelper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var starts []int
	for _, m := range headerColumn.FindAllStringIndex(lines[0], -1) {
		starts = append(starts, m[0])
	}
	var rows [][]string
	for _, line := range lines {
		Expect(strings.TrimSpace(line[:starts[0]])).To(BeEmpty(), "line %q starts before the first column", line)
		var cells []string
		for i, start := range starts {
			end := len(line)
			if i+1 < len(starts) {
				end = min(starts[i+1], len(line))
			}
			if start >= end {
				cells = append(cells, "")
				continue
			}
			Expect(start == 0 || line[start-1] == ' ').To(BeTrue(), "a value runs into column %d of %q", i, line)
			cells = append(cells, strings.TrimSpace(line[start:end]))
		}
		rows = append(rows, cells)
	}
	return rows
}

// id makes names unique to one test.
func id(name string) string { return name + "-" + rand.String(5) }

// namespace creates a namespace for one test, its name prefix followed by a random suffix.
func namespace(ctx context.Context, prefix string) string {
	GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id(prefix)}}
	Expect(hub.Create(ctx, ns)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, ns)).To(Succeed()) })
	return ns.Name
}

// ago is a time d before now, to the second as the API keeps it.
func ago(d time.Duration) *metav1.Time {
	t := metav1.NewTime(time.Now().Add(-d).Truncate(time.Second))
	return &t
}

// volume creates a VolumeOwnership with the status a coordinator would have written. It is
// deleted after the test, before its namespace, so that listings of every namespace see only
// the test's own.
func volume(ctx context.Context, ns, name string, status storagev1alpha1.VolumeOwnershipStatus) {
	GinkgoHelper()
	v := &storagev1alpha1.VolumeOwnership{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	Expect(hub.Create(ctx, v)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, v)).To(Succeed()) })
	v.Status = status
	Expect(hub.Status().Update(ctx, v)).To(Succeed())
}

// target creates a SyncTarget with the status its syncer and the health controller would
// have written, and a heartbeat Lease last renewed at heartbeat unless that is nil; ready ""
// leaves it without a Ready condition, as a target never heard from.
func target(ctx context.Context, name string, labels map[string]string, spec workloadv1alpha1.SyncTargetSpec, key string, ready metav1.ConditionStatus, heartbeat *metav1.Time) {
	GinkgoHelper()
	t := framework.Target(ctx, hub, name, labels, spec)
	// unjoin may have deleted it.
	framework.DeleteAfter(hub, t)
	if heartbeat != nil {
		lease := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name},
			Spec:       coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: heartbeat.Time}},
		}
		err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lease.Namespace}})
		Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		Expect(hub.Create(ctx, lease)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, lease)).To(Succeed()) })
	}
	t.Status.Key = key
	switch ready {
	case metav1.ConditionTrue:
		meta.SetStatusCondition(&t.Status.Conditions, metav1.Condition{Type: workloadv1alpha1.ConditionReady, Status: ready, Reason: workloadv1alpha1.ReasonHeartbeating})
	case metav1.ConditionFalse:
		meta.SetStatusCondition(&t.Status.Conditions, metav1.Condition{Type: workloadv1alpha1.ConditionReady, Status: ready, Reason: workloadv1alpha1.ReasonUnreachable})
	}
	Expect(hub.Status().Update(ctx, t)).To(Succeed())
}

// location creates a Location over the targets that match labels.
func location(ctx context.Context, name string, labels map[string]string) {
	GinkgoHelper()
	l := framework.Location(ctx, hub, name, nil, labels)
	DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, l)).To(Succeed()) })
}

// report sets conditions on a target's status, as its syncer and the health controller
// would.
func report(ctx context.Context, name string, conditions ...metav1.Condition) {
	GinkgoHelper()
	t := getTarget(ctx, name)
	for _, c := range conditions {
		meta.SetStatusCondition(&t.Status.Conditions, c)
	}
	Expect(hub.Status().Update(ctx, t)).To(Succeed())
}

// fence creates the Fence of target in domain with the status the fencing controller would
// have written. No controller runs on the bed: only the commands under test change it.
func fence(ctx context.Context, target, domain string, mode storagev1alpha1.FenceMode, state storagev1alpha1.FenceState, status storagev1alpha1.FenceStatus) *storagev1alpha1.Fence {
	GinkgoHelper()
	f := &storagev1alpha1.Fence{
		ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(target, domain)},
		Spec:       storagev1alpha1.FenceSpec{TargetName: target, Domain: domain, Mode: mode, State: state},
	}
	Expect(hub.Create(ctx, f)).To(Succeed())
	deleteFenceAfter(f.Name)
	f.Status = status
	Expect(hub.Status().Update(ctx, f)).To(Succeed())
	return f
}

// deleteFenceAfter deletes Fence name, if it exists, after the test.
func deleteFenceAfter(name string) {
	framework.DeleteAfter(hub, &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: name}})
}

// getFence reads Fence name; nil when there is none.
func getFence(ctx context.Context, name string) *storagev1alpha1.Fence {
	GinkgoHelper()
	f := &storagev1alpha1.Fence{}
	err := hub.Get(ctx, client.ObjectKey{Name: name}, f)
	if apierrors.IsNotFound(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	return f
}

func getTarget(ctx context.Context, name string) *workloadv1alpha1.SyncTarget {
	GinkgoHelper()
	t := &workloadv1alpha1.SyncTarget{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: name}, t)).To(Succeed())
	return t
}

// kubeconfig writes a copy of the hub's kubeconfig whose current context has namespace ns and
// whose server is server, either left as it is when empty, and returns its path.
func kubeconfig(ns, server string) string {
	GinkgoHelper()
	cfg, err := clientcmd.LoadFromFile(bed.Hub.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	current := cfg.Contexts[cfg.CurrentContext]
	if ns != "" {
		current.Namespace = ns
	}
	if server != "" {
		cfg.Clusters[current.Cluster].Server = server
	}
	path := filepath.Join(GinkgoT().TempDir(), "hub.kubeconfig")
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// closedPort is a local TCP port that nothing listens on.
func closedPort() string {
	GinkgoHelper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return addr
}
