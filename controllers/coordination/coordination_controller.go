package coordination

import (
	"context"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/internal/protection"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/coordination"
	"github.com/custody-dev/custody/fencing"
)

// Concurrency is how many claims take a step at once; each claim's steps stay in order.
const Concurrency = 16

// fieldOwner owns the VolumeOwnership's status.
const fieldOwner = "custody-coordination"

// claimRefIndex indexes hub PVs by the namespace/name of the claim they name.
const claimRefIndex = "spec.claimRef"

// Reconciler drives the volume of each hub claim through its phases.
type Reconciler struct {
	Client client.Client
	// APIReader reads past the cache, for what must not be stale.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Compatible refuses owned moves between StorageClasses that differ; nil allows them.
	Compatible coordination.CompatibleFunc
	// FenceDelay is how long an owner must be Unreachable before its volumes wait for a
	// Fence of it instead of its acknowledgement; zero means three of its heartbeat graces.
	// A SyncTarget's spec.fenceDelay overrides it.
	FenceDelay time.Duration
	// HeartbeatGrace is the health controller's grace; zero: three periods of each Lease.
	HeartbeatGrace time.Duration
	// Brake holds back the Fences of lost owners while many targets are lost at once; zero:
	// no brake.
	Brake fencing.Brake
	// FollowNamespaces makes each claim follow its namespace's placement here, written with
	// the step the claim takes, instead of in a write of the workload controller's of its own.
	FollowNamespaces bool

	metrics *volumeMetrics
	// written are the versions of the records this controller wrote last.
	written *versions.Written
	// replaced are the versions of its claims and PVs that its last writes replaced.
	replaced *versions.Replaced
}

// SetupWithManager registers the controller. Claims are reconciled when they change, when
// their hub PV or VolumeOwnership changes, and when a target's readiness, domains or
// reported classes change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	opts.MaxConcurrentReconciles = Concurrency
	r.metrics = newVolumeMetrics()
	if err := movingCollector.Register(mgr); err != nil {
		return err
	}
	r.written = versions.New()
	r.replaced = versions.NewReplaced()
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.PersistentVolume{}, claimRefIndex, func(o client.Object) []string {
		if ref := o.(*corev1.PersistentVolume).Spec.ClaimRef; ref != nil {
			return []string{ref.Namespace + "/" + ref.Name}
		}
		return nil
	}); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("coordination").
		For(&corev1.PersistentVolumeClaim{}).
		Owns(&storagev1alpha1.VolumeOwnership{}).
		Watches(&corev1.PersistentVolume{}, handler.EnqueueRequestsFromMapFunc(claimOfVolume)).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(r.claimsOnTarget),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: targetChanged})).
		Watches(&storagev1alpha1.Fence{}, handler.EnqueueRequestsFromMapFunc(r.claimsOnFencedTarget))
	if r.FollowNamespaces {
		claimsIn := enqueue.All(r.Client, func() client.ObjectList { return &corev1.PersistentVolumeClaimList{} }, enqueue.InNamespaceOf)
		b = b.Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(claimsIn),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})))
	}
	return b.WithOptions(opts).Complete(r)
}

func claimOfVolume(_ context.Context, o client.Object) []reconcile.Request {
	ref := o.(*corev1.PersistentVolume).Spec.ClaimRef
	if ref == nil {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}}}
}

// claimsOnFencedTarget maps a Fence to the claims placed on its target, and to those whose
// record says the Fence took their volume from it: coordination released them from the
// target, and they wait for its Fence to be lifted.
func (r *Reconciler) claimsOnFencedTarget(ctx context.Context, o client.Object) []reconcile.Request {
	target := o.(*storagev1alpha1.Fence).Spec.TargetName
	out := r.claimsOn(ctx, target)
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing volume ownerships")
		return out
	}
	key := workloadv1alpha1.ToSyncTargetKey(target)
	for _, vo := range list.Items {
		if slices.Contains(vo.Status.FencedOff, key) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&vo)})
		}
	}
	return out
}

// claimsOnTarget maps a target to the claims placed on it, or waiting for a target.
func (r *Reconciler) claimsOnTarget(ctx context.Context, o client.Object) []reconcile.Request {
	return r.claimsOn(ctx, o.GetName())
}

// claimsOn are the claims placed on the target or waiting for a target, and the claims of the
// PVs it still holds: a departing owner whose syncer let go of the claim, but was lost before
// it let go of the PV, holds the volume through the PV alone.
func (r *Reconciler) claimsOn(ctx context.Context, target string) []reconcile.Request {
	label := workloadv1alpha1.StateLabel(workloadv1alpha1.ToSyncTargetKey(target))
	list := &corev1.PersistentVolumeClaimList{}
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing claims")
		return nil
	}
	var out []reconcile.Request
	for _, c := range list.Items {
		if _, on := c.Labels[label]; on || c.Spec.VolumeName == "" {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	volumes := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, volumes, client.HasLabels{label}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing volumes")
		return out
	}
	for i := range volumes.Items {
		out = append(out, claimOfVolume(ctx, &volumes.Items[i])...)
	}
	return out
}

func targetChanged(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.(*workloadv1alpha1.SyncTarget), e.ObjectNew.(*workloadv1alpha1.SyncTarget)
	return o.Generation != n.Generation || o.IsReady() != n.IsReady() ||
		!equality.Semantic.DeepEqual(o.Status.StorageClasses, n.Status.StorageClasses) ||
		!equality.Semantic.DeepEqual(o.Status.FenceClients, n.Status.FenceClients)
}

// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=persistentvolumes/status,verbs=patch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=fences,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=volumeownerships,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=volumeownerships/status,verbs=get;patch

// Reconcile takes one step of the claim's volume.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := r.Client.Get(ctx, req.NamespacedName, claim); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		r.metrics.forget(req.NamespacedName)
		r.written.Forget(req.NamespacedName)
		r.replaced.Forget(req.NamespacedName)
		return ctrl.Result{}, r.releaseRecord(ctx, req.NamespacedName)
	}
	if r.replaced.Behind(req.NamespacedName, req.NamespacedName, claim.ResourceVersion) {
		return ctrl.Result{}, nil // the event of the last write of the claim brings it back
	}
	read, err := r.follow(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !coordinated(claim) {
		// A deleted claim that was never placed: let go of the hub's protection.
		return ctrl.Result{}, protection.Release(ctx, r.Client, claim)
	}
	if claim.DeletionTimestamp.IsZero() && controllerutil.AddFinalizer(claim, storagev1alpha1.VolumeFinalizer) {
		rv := claim.ResourceVersion
		err := r.Client.Update(ctx, claim)
		r.replaced.Wrote(req.NamespacedName, req.NamespacedName, rv, claim.ResourceVersion)
		return ctrl.Result{}, err
	}
	s, err := r.observe(ctx, claim)
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.volume != nil && r.replaced.Behind(req.NamespacedName, client.ObjectKeyFromObject(s.volume), s.volume.ResourceVersion) {
		return ctrl.Result{}, nil // the event of the last write of the PV brings the claim back
	}
	s.read = read
	d, err := r.decide(ctx, s)
	if err != nil {
		return ctrl.Result{}, err
	}
	w := plan(s, d)
	if w.fence != "" {
		// Before the decision is recorded: a volume recorded moved off a target whose Fence
		// is being lifted would be a record of a release that does not happen.
		if err := confirmFenced(ctx, r.APIReader, w.fence); err != nil {
			return ctrl.Result{}, err
		}
	}
	if err := r.record(ctx, s, d); err != nil {
		return ctrl.Result{}, err
	}
	err = r.carryOut(ctx, w, d)
	w.remember(r.replaced)
	return ctrl.Result{RequeueAfter: d.Recheck}, err
}

// follow makes the claim follow its namespace's placement, in memory: a state (Pending) on
// each target the namespace is on, and its removal requested from each target the namespace
// leaves. The step the claim takes writes it. It returns the claim as it was read when it
// changed, else nil.
func (r *Reconciler) follow(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, error) {
	if !r.FollowNamespaces || !claim.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: claim.Namespace}, ns); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	change := workloadv1alpha1.Propagate(ns, claim, true, time.Now())
	if change.Empty() {
		return nil, nil
	}
	read := claim.DeepCopy()
	change.Apply(claim)
	ctrl.LoggerFrom(ctx).V(1).Info("Following namespace placement", "placed", change.Place, "leaving", change.Leave, "returning", change.Return)
	return read, nil
}

// decide takes the next step's decision. A claim given to a target to provision may have had
// its PV upsynced by the last target it was given to after the cache was read: then the PV
// is looked up past the cache first, and the decision taken again with it.
func (r *Reconciler) decide(ctx context.Context, s *scope) (coordination.Decision, error) {
	d := coordination.Decide(r.observation(s))
	if !d.Provisions() {
		return d, nil
	}
	pv, err := r.liveVolume(ctx, s.claim)
	if err != nil || pv == nil {
		return d, err
	}
	s.volume = pv
	return coordination.Decide(r.observation(s)), nil
}

// observation is what the decision reads of the scope, now.
func (r *Reconciler) observation(s *scope) coordination.Observation {
	o := s.observation(r.Compatible, time.Now(), r.fenceDelay)
	o.Brake = r.Brake
	return o
}

// fenceDelay is how long the target must be Unreachable before its owned volumes wait for a
// Fence of it (fencing.Delay).
func (r *Reconciler) fenceDelay(t *workloadv1alpha1.SyncTarget, lease *coordinationv1.Lease) time.Duration {
	return fencing.Delay(t, r.FenceDelay, r.HeartbeatGrace, lease)
}

// coordinated: the claim is placed on a target, or the coordinator still holds it.
func coordinated(claim *corev1.PersistentVolumeClaim) bool {
	return controllerutil.ContainsFinalizer(claim, storagev1alpha1.VolumeFinalizer) || len(workloadv1alpha1.Targets(claim)) > 0
}

// releaseRecord lets the VolumeOwnership of a claim that is gone go: the garbage collector
// or the namespace's deletion removes it.
func (r *Reconciler) releaseRecord(ctx context.Context, key client.ObjectKey) error {
	vo := &storagev1alpha1.VolumeOwnership{}
	if err := r.Client.Get(ctx, key, vo); err != nil || !controllerutil.ContainsFinalizer(vo, storagev1alpha1.RecordFinalizer) {
		return client.IgnoreNotFound(err)
	}
	// The cache may not show a claim made a moment ago with the same name yet.
	claim := &corev1.PersistentVolumeClaim{}
	if err := r.APIReader.Get(ctx, key, claim); !apierrors.IsNotFound(err) {
		return err
	}
	patch := client.MergeFromWithOptions(vo.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(vo, storagev1alpha1.RecordFinalizer)
	return client.IgnoreNotFound(r.Client.Patch(ctx, vo, patch))
}

// record writes the decision on the VolumeOwnership before anything acts on it.
func (r *Reconciler) record(ctx context.Context, s *scope, d coordination.Decision) error {
	vo := s.ownership
	if vo.UID == "" {
		if err := controllerutil.SetControllerReference(s.claim, vo, r.Client.Scheme()); err != nil {
			return err
		}
		controllerutil.AddFinalizer(vo, storagev1alpha1.RecordFinalizer)
		if err := r.Client.Create(ctx, vo); err != nil {
			return err
		}
		r.written.Wrote(client.ObjectKeyFromObject(vo), vo.ResourceVersion)
	}
	before := vo.Status.DeepCopy()
	changed := recordDecision(&vo.Status, d, s.volumeName(), s.storageClassName(), nowTime())
	if equality.Semantic.DeepEqual(*before, vo.Status) {
		return nil
	}
	applied := &storagev1alpha1.VolumeOwnership{ObjectMeta: metav1.ObjectMeta{Namespace: vo.Namespace, Name: vo.Name}, Status: vo.Status}
	// The replica and the Replicated condition are the dr controller's fields: applied as
	// read, they could set older ones back.
	applied.Status.Replica = nil
	meta.RemoveStatusCondition(&applied.Status.Conditions, storagev1alpha1.ConditionReplicated)
	if err := status.Apply(ctx, r.Client, applied, fieldOwner); err != nil {
		return err
	}
	r.written.Wrote(client.ObjectKeyFromObject(vo), applied.ResourceVersion)
	if changed {
		r.Recorder.Eventf(s.claim, vo, corev1.EventTypeNormal, d.Reason, "Coordinate", "%s: %s", d.Phase, d.Message)
		ctrl.LoggerFrom(ctx).Info("Volume changed phase", "from", before.Phase, "to", d.Phase, "owner", d.Owner, "reason", d.Reason)
		r.metrics.transition(*before, vo.Status, s.unreachableSince(before.Owner))
	}
	r.metrics.count(client.ObjectKeyFromObject(s.claim), vo.Status)
	return nil
}

// carryOut makes the decision's writes (plan): the PV and the claim each patched once, in the
// order the actions first name them.
func (r *Reconciler) carryOut(ctx context.Context, w *writes, d coordination.Decision) error {
	for _, step := range w.order {
		if err := step(ctx, r.Client); err != nil {
			return fmt.Errorf("%s: %w", w.describe(), err)
		}
	}
	if len(w.order) > 0 {
		ctrl.LoggerFrom(ctx).V(1).Info("Took a step", "phase", d.Phase, "actions", w.describe())
	}
	return nil
}
