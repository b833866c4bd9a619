package simstorage

import (
	"context"
	"fmt"
	"sync"

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
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/reconnect"
)

// Storage is one simulated storage domain, shared by the members attached to it.
type Storage struct {
	name   string
	ledger *ledger
	wg     sync.WaitGroup

	mu      sync.Mutex
	readers map[string]client.Reader // each attached member's API server, uncached
}

// New returns the storage domain called name, with nothing attached yet.
func New(name string) *Storage {
	return &Storage{name: name, ledger: newLedger(), readers: map[string]client.Reader{}}
}

// Name is the storage domain's name, also the name of the StorageClass it installs.
func (s *Storage) Name() string { return s.name }

// Provisioner is the CSI driver name that the domain's StorageClasses name.
func (s *Storage) Provisioner() string { return s.name + ".storage.sim.custody.dev" }

// attacherFinalizer is the finalizer the driver keeps on a PV while its volume is attached,
// named as the external attacher names it.
func (s *Storage) attacherFinalizer() string { return "external-attacher/" + s.Provisioner() }

// Attach makes the member reach the domain: it installs a StorageClass named after the domain
// (reclaimPolicy Delete, Immediate binding, annotated with its storage domain) and runs the domain's driver against the member
// until ctx ends. It returns once the driver watches the member.
func (s *Storage) Attach(ctx context.Context, member string, cfg *rest.Config) error {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		// A real driver's sidecars lose their leader lease in an outage of the member's API
		// server and restart, so they see the member at once when it answers again.
		Cache:                  cache.Options{NewInformer: reconnect.New().NewInformer},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 ctrl.Log.WithName("simstorage").WithValues("domain", s.name, "member", member),
	})
	if err != nil {
		return err
	}
	if err := s.ensureClass(ctx, mgr.GetAPIReader(), mgr.GetClient()); err != nil {
		return fmt.Errorf("installing StorageClass %s in %s: %w", s.name, member, err)
	}
	s.mu.Lock()
	s.readers[member] = mgr.GetAPIReader()
	s.mu.Unlock()
	d := &driver{storage: s, member: member, client: mgr.GetClient()}
	if err := d.setup(mgr); err != nil {
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

func (s *Storage) ensureClass(ctx context.Context, r client.Reader, w client.Writer) error {
	class := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: s.name,
			// As in most clusters, the member's one class is its default: claims that name no
			// class get it.
			Annotations: map[string]string{storagev1alpha1.DomainAnnotation: s.name, defaultClassAnnotation: "true"}},
		Provisioner:          s.Provisioner(),
		ReclaimPolicy:        ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
		AllowVolumeExpansion: ptr.To(true),
		Parameters:           map[string]string{"domain": s.name},
	}
	if err := r.Get(ctx, client.ObjectKeyFromObject(class), &storagev1.StorageClass{}); !apierrors.IsNotFound(err) {
		return err
	}
	if err := w.Create(ctx, class); !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// Volume returns the record of the volume with the given handle.
func (s *Storage) Volume(handle string) (Volume, bool) { return s.ledger.volume(handle) }

// Volumes returns every volume the domain ever provisioned, sorted by handle.
func (s *Storage) Volumes() []Volume { return s.ledger.list() }

// CheckSingleOwner fails if a member ever asked to attach an owned volume that another
// member had attached.
func (s *Storage) CheckSingleOwner() error { return s.ledger.check(AttachRefused) }

// CheckReleases fails if a member ever asked to delete backing storage that another member
// had attached, or the storage was deleted while a PV still referenced it, or deleted twice.
func (s *Storage) CheckReleases() error {
	return s.ledger.check(ReleaseRefused, ReleasedWhileReferenced, ReleasedTwice)
}
