package simstorage

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/reconnect"
)

// Storage is one simulated storage domain, shared by the members attached to it.
type Storage struct {
	name   string
	ledger *ledger
	wg     sync.WaitGroup

	// fencing and volumes degrade the array's answers to fencing operations and to volume
	// operations (provisioning, attaching, detaching, releasing) while a test says so.
	fencing, volumes degradation

	mu      sync.Mutex
	readers map[string]client.Reader // each attached member's API server, uncached
	writers map[string]client.Client // each attached member's API server
	// clients are the addresses GetFenceClients reports of a member, where a test set them
	// apart from its node CIDRs (ReportFenceClients).
	clients map[string][]string
}

// New returns the storage domain called name, with nothing attached yet.
func New(name string) *Storage {
	return &Storage{name: name, ledger: newLedger(), readers: map[string]client.Reader{}, writers: map[string]client.Client{}, clients: map[string][]string{}}
}

// Name is the storage domain's name, also the name of the StorageClass it installs.
func (s *Storage) Name() string { return s.name }

// Provisioner is the CSI driver name that the domain's StorageClasses name.
func (s *Storage) Provisioner() string { return s.name + ".storage.sim.custody.dev" }

// attacherFinalizer is the finalizer the driver keeps on a PV while its volume is attached,
// named as the external attacher names it.
func (s *Storage) attacherFinalizer() string { return "external-attacher/" + s.Provisioner() }

// Attach makes the member, whose nodes have the addresses nodeCIDRs, reach the domain: it
// installs a StorageClass named after the domain (reclaimPolicy Delete, Immediate binding,
// annotated with its storage domain) and a NetworkFenceClass of the same name, and runs the
// domain's driver against the member until ctx ends. As the csi-addons sidecar and
// controller would, it registers a CSIAddonsNode that reports, for that class, the member's
// node CIDRs as its clients (ReportFenceClients). It returns once the driver watches the
// member.
func (s *Storage) Attach(ctx context.Context, member string, cfg *rest.Config, nodeCIDRs []string) error {
	if err := s.ledger.join(member, nodeCIDRs); err != nil {
		return fmt.Errorf("node CIDRs of %s: %w", member, err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	for _, add := range []func(*runtime.Scheme) error{csiaddonsv1alpha1.AddToScheme, snapshotv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	// A real driver's sidecars lose their leader lease in an outage of the member's API
	// server and restart, so they see the member at once when it answers again, with no
	// backoff left from the outage and no wait asked by a server that was still starting.
	recovery := reconnect.New()
	mgr, err := ctrl.NewManager(reconnect.Config(cfg), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{NewInformer: recovery.NewInformer},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 ctrl.Log.WithName("simstorage").WithValues("domain", s.name, "member", member),
	})
	if err != nil {
		return err
	}
	for _, class := range s.classes() {
		if err := ensure(ctx, mgr.GetAPIReader(), mgr.GetClient(), class); err != nil {
			return fmt.Errorf("installing %T %s in %s: %w", class, s.name, member, err)
		}
	}
	s.mu.Lock()
	s.readers[member], s.writers[member] = mgr.GetAPIReader(), mgr.GetClient()
	s.mu.Unlock()
	if err := s.reportFenceClients(ctx, member); err != nil {
		return fmt.Errorf("reporting the fence clients of %s: %w", member, err)
	}
	d := &driver{storage: s, member: member, client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder(s.Provisioner())}
	if err := d.setup(mgr, controller.Options{NewQueue: recovery.NewQueue}); err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "Simulated storage driver stopped", "domain", s.name, "member", member)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("simulated storage %s: cache of %s did not sync", s.name, member)
	}
	return nil
}

// stillReferenced returns, of the PVs refs, those that their member's API server still shows
// referring to handle, as member/name. A PV that cannot be read counts as referring to it.
func (s *Storage) stillReferenced(ctx context.Context, handle string, refs []pvRef) []string {
	var out []string
	for _, ref := range refs {
		s.mu.Lock()
		r := s.readers[ref.member]
		s.mu.Unlock()
		pv := &corev1.PersistentVolume{}
		if r != nil {
			if err := r.Get(ctx, client.ObjectKey{Name: ref.pv}, pv); apierrors.IsNotFound(err) ||
				err == nil && (pv.Spec.CSI == nil || pv.Spec.CSI.VolumeHandle != handle) {
				continue
			}
		}
		out = append(out, ref.member+"/"+ref.pv)
	}
	return out
}

// Wait blocks until every driver started by Attach has stopped.
func (s *Storage) Wait() { s.wg.Wait() }

// defaultClassAnnotation marks a cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// classes are the StorageClass and the NetworkFenceClass the domain installs in a member.
func (s *Storage) classes() []client.Object {
	return []client.Object{&storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: s.name,
			// As in most clusters, the member's one class is its default: claims that name no
			// class get it.
			Annotations: map[string]string{storagev1alpha1.DomainAnnotation: s.name, defaultClassAnnotation: "true"}},
		Provisioner:          s.Provisioner(),
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
		AllowVolumeExpansion: ptr.To(true),
		Parameters:           map[string]string{"domain": s.name},
	}, &csiaddonsv1alpha1.NetworkFenceClass{
		ObjectMeta: metav1.ObjectMeta{Name: s.name},
		Spec:       csiaddonsv1alpha1.NetworkFenceClassSpec{Provisioner: s.Provisioner()},
	}}
}

// ensure creates obj unless an object of its kind and name exists. One that exists gets
// obj's annotations: a member kept from an earlier run may have its class from before the
// class was marked default.
func ensure(ctx context.Context, r client.Reader, w client.Writer, obj client.Object) error {
	cur := obj.DeepCopyObject().(client.Object)
	err := r.Get(ctx, client.ObjectKeyFromObject(obj), cur)
	if apierrors.IsNotFound(err) {
		return client.IgnoreAlreadyExists(w.Create(ctx, obj))
	}
	if err != nil {
		return err
	}
	annotations := cur.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	patch := client.MergeFrom(cur.DeepCopyObject().(client.Object))
	changed := false
	for k, v := range obj.GetAnnotations() {
		changed = changed || annotations[k] != v
		annotations[k] = v
	}
	if !changed {
		return nil
	}
	cur.SetAnnotations(annotations)
	return w.Patch(ctx, cur, patch)
}

// Volume returns the record of the volume with the given handle.
func (s *Storage) Volume(handle string) (Volume, bool) { return s.ledger.volume(handle) }

// Volumes returns every volume the domain ever provisioned, sorted by handle.
func (s *Storage) Volumes() []Volume { return s.ledger.list() }

// CheckSingleOwner fails if a member ever asked to attach an owned volume that another
// unfenced member had attached, or was unfenced while it had attached an owned volume that
// another unfenced member had attached too.
func (s *Storage) CheckSingleOwner() error {
	return s.ledger.check(AttachRefused, UnfencedWhileAttachedElsewhere)
}

// CheckReleases fails if a member ever asked to delete backing storage that another member
// had attached, or the storage was deleted while a PV still referenced it, or deleted twice.
func (s *Storage) CheckReleases() error {
	return s.ledger.check(ReleaseRefused, ReleasedWhileReferenced, ReleasedTwice)
}

// Write writes record to the volume for member, as the member's workload would. It is
// acknowledged (nil) only while the member has the volume attached and is neither fenced
// nor powered off; otherwise the error wraps ErrWriteRefused and the refusal is recorded.
func (s *Storage) Write(member, handle, record string) error {
	return s.ledger.write(member, handle, record)
}

// load replaces the volume's log with a copy of another volume's.
func (s *Storage) load(handle string, log []string) error { return s.ledger.load(handle, log) }

// Snapshot returns the log that a VolumeSnapshot the domain cut in member holds, and whether
// the domain cut it and still has it.
func (s *Storage) Snapshot(member, namespace, name string) ([]string, bool) {
	handle, _, ok := s.ledger.cutFor(snapshotKey(member, namespace, name))
	if !ok {
		return nil, false
	}
	return s.ledger.snapshotLog(handle)
}

// SnapshotOf returns the log that the domain's snapshot of the handle holds, and whether the
// domain has it: a VolumeSnapshotContent of any member may name it.
func (s *Storage) SnapshotOf(handle string) ([]string, bool) { return s.ledger.snapshotLog(handle) }

func snapshotKey(member, namespace, name string) string { return member + "/" + namespace + "/" + name }

// Records returns the records written to the volume, oldest first; nil once it is deleted.
func (s *Storage) Records(handle string) []string { return s.ledger.records(handle) }

// CheckWrites fails if an acknowledged write is missing from its volume, for instance
// because the volume was deleted since.
func (s *Storage) CheckWrites() error { return s.ledger.checkWrites() }

// Violations returns every breach of an invariant the storage saw, oldest first.
func (s *Storage) Violations() []Violation { return s.ledger.listViolations() }

// LostWrites returns the acknowledged writes that the volume's log lacks. A deleted
// volume's writes went with it: it has none lost.
func (s *Storage) LostWrites(handle string) []string { return s.ledger.lostWritesOf(handle) }

// FailVolumes makes every volume operation from now on (provisioning, attaching, detaching,
// releasing) fail with msg, as an array that errs; the drivers retry as CSI sidecars do. ""
// makes them succeed again.
func (s *Storage) FailVolumes(msg string) { s.volumes.fail(msg) }

// SlowVolumes makes every volume operation, those under way too, take d from its start
// before it answers; 0 makes them immediate again.
func (s *Storage) SlowVolumes(d time.Duration) { s.volumes.slow(d) }

// Refusals returns the requests the storage refused without an invariant being broken (see
// RefusalKind), oldest first. A retried attach is recorded once.
func (s *Storage) Refusals() []Refusal { return s.ledger.listRefusals() }
