package syncer

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer"
	"github.com/custody-dev/custody/controllers/syncer/downsync"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

// The groups of the users the syncers and the controller run as, bound to their roles in
// config/.
const (
	syncersGroup     = "custody:syncers"
	controllersGroup = "custody:controllers"
)

// installRBAC installs the roles of config/: the syncer's into the hub and the members, bound
// to the syncers' group, and the controller's into the hub, bound to the controller's group.
// No controller runs here to grant a syncer the namespaces placed on its target, so the
// syncers' group holds every syncer role everywhere: this suite tests what the syncer does;
// the security suite tests what it may do.
func installRBAC(ctx context.Context) {
	root, err := testbed.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	install := func(c *testbed.Cluster, file, group string) {
		data, err := os.ReadFile(filepath.Join(root, "config", file))
		Expect(err).NotTo(HaveOccurred())
		subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}}
		for doc := range strings.SplitSeq(string(data), "\n---\n") {
			var kind struct{ Kind string }
			Expect(yaml.Unmarshal([]byte(doc), &kind)).To(Succeed())
			switch kind.Kind {
			case "ClusterRole":
				role := &rbacv1.ClusterRole{}
				Expect(yaml.UnmarshalStrict([]byte(doc), role)).To(Succeed())
				Expect(c.Client.Create(ctx, role)).To(Succeed())
				Expect(c.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
					ObjectMeta: metav1.ObjectMeta{Name: role.Name},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
					Subjects:   subjects,
				})).To(Succeed())
			case "Role":
				role := &rbacv1.Role{}
				Expect(yaml.UnmarshalStrict([]byte(doc), role)).To(Succeed())
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: role.Namespace}}
				Expect(client.IgnoreAlreadyExists(c.Client.Create(ctx, ns))).To(Succeed())
				Expect(c.Client.Create(ctx, role)).To(Succeed())
				Expect(c.Client.Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Namespace: role.Namespace, Name: role.Name},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
					Subjects:   subjects,
				})).To(Succeed())
			}
		}
	}
	install(bed.Hub, "rbac/syncer-hub-role.yaml", syncersGroup)
	install(bed.Hub, "rbac/role.yaml", controllersGroup)
	for _, m := range bed.Members {
		install(m, "syncer/syncer-member-role.yaml", syncersGroup)
	}
}

// createSyncTarget registers a member on the hub.
func createSyncTarget(ctx context.Context, name string) {
	framework.Target(ctx, bed.Hub.Client, name, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"shared"}})
}

// runningSyncer is a syncer run in the test process, as the local environment runs them,
// with only the permissions config/ gives it.
type runningSyncer struct {
	opts   syncer.Options
	cancel context.CancelFunc
	done   chan error
}

// startSyncer starts the syncer of the target called name, next to member, and stops it when
// the current node ends.
func startSyncer(name string, member *testbed.Cluster) *runningSyncer {
	hubCfg, err := bed.Hub.UserConfig("custody-syncer-"+name, syncersGroup)
	Expect(err).NotTo(HaveOccurred())
	memberCfg, err := member.UserConfig("custody-syncer-"+name, syncersGroup)
	Expect(err).NotTo(HaveOccurred())
	s := &runningSyncer{opts: syncer.Options{
		HubConfig: hubCfg, MemberConfig: memberCfg, SyncTargetName: name, HeartbeatPeriod: heartbeatPeriod,
	}}
	s.start()
	DeferCleanup(s.stop)
	return s
}

func (s *runningSyncer) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan error, 1)
	go func() {
		defer GinkgoRecover()
		s.done <- syncer.Run(ctx, s.opts)
	}()
}

// stop stops the syncer and waits until it has; Run must end without an error.
func (s *runningSyncer) stop() {
	if s.cancel == nil {
		return
	}
	s.cancel()
	Expect(<-s.done).To(Succeed())
	s.cancel = nil
}

// hubNamespace creates a hub namespace of its own for a spec, labelled Sync for the
// targets, and returns its name.
func hubNamespace(ctx context.Context, targets ...string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-", Labels: synced(nil, targets...)}}
	Expect(bed.Hub.Client.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

// synced returns a copy of labels with the state label Sync for each target.
func synced(labels map[string]string, targets ...string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	for _, t := range targets {
		out[workloadv1alpha1.StateLabel(workloadv1alpha1.ToSyncTargetKey(t))] = string(workloadv1alpha1.ResourceStateSync)
	}
	return out
}

// targetOf is what the syncer of the target called name knows of itself.
func targetOf(name string) transform.Target {
	return transform.Target{Key: workloadv1alpha1.ToSyncTargetKey(name), Hub: hubID}
}

// downKey is the key of a namespaced hub object's copy in the member of the target called
// name.
func downKey(name string, hubObj client.Object) client.ObjectKey {
	return framework.CopyKey(hubID, workloadv1alpha1.ToSyncTargetKey(name), hubObj.GetNamespace(), hubObj.GetName())
}

// fetch returns a function for Eventually that reads key from c into obj.
func fetch(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object) func() error {
	return func() error { return c.Get(ctx, key, obj) }
}

// writes counts the writes the syncer of the target called name made to its member, for
// the kinds.
func writes(name string, kinds ...string) float64 {
	var n float64
	for _, k := range kinds {
		for _, op := range []string{"apply", "delete"} {
			n += testutil.ToFloat64(downsync.DownstreamWrites.WithLabelValues(workloadv1alpha1.ToSyncTargetKey(name), k, op))
		}
	}
	return n
}
