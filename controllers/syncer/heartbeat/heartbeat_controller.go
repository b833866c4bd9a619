package heartbeat

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/packedcache"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/fencing"
)

// Annotations that mark a member's default StorageClass.
var defaultClassAnnotations = []string{
	"storageclass.kubernetes.io/is-default-class",
	"storageclass.beta.kubernetes.io/is-default-class",
}

// Reconciler reports the member to the SyncTarget, and hands each clean report to the
// Renewer through Reports. Its one request names the SyncTarget.
type Reconciler struct {
	// Hub reads the SyncTarget through the syncer's cache and writes to the hub.
	Hub client.Client
	// MemberReader reads the member directly.
	MemberReader client.Reader
	// Member reads the syncer's own objects in the member through its cache.
	Member client.Reader
	// SyncTargetName names the target.
	SyncTargetName string
	// Period is how often the member is reported, beside the changes that call for it.
	Period time.Duration
	// SyncedResources are the resource types the syncer syncs, as resource.group.
	SyncedResources []string
	// Target tells the syncer's own objects in the member; with it, the heartbeat reports
	// per storage domain whether the member holds a volume the hub no longer gives it.
	Target transform.Target
	// Reports takes each clean report, once its conditions are in the status.
	Reports *Reports
}

// SetupWithManager registers the reconciler with the member's manager; hub is the hub
// cluster. The reconciler runs once at start, then on every change of the SyncTarget or of
// a member StorageClass, and once per period.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	req := reconcile.Request{NamespacedName: types.NamespacedName{Name: r.SyncTargetName}}
	toTarget := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{req}
	})
	return ctrl.NewControllerManagedBy(mgr).Named("heartbeat").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&workloadv1alpha1.SyncTarget{}), toTarget)).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(&storagev1.StorageClass{}), toTarget)).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(req)
			return nil
		})).
		Complete(r)
}

// Reconcile reads the member's StorageClasses, reports the member, hands the clean report
// to the Renewer, and comes back in a period.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	// To the microsecond, as the report goes into the Lease.
	began := time.Now().Truncate(time.Microsecond)
	classes := &storagev1.StorageClassList{}
	if err := r.MemberReader.List(ctx, classes); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the member's storage classes: %w", err)
	}
	clean, err := r.ensureReport(ctx, classes.Items)
	if err != nil {
		return ctrl.Result{}, err
	}
	if clean != nil {
		report := workloadv1alpha1.CleanReport{Time: metav1.NewMicroTime(began), Clean: map[string]metav1.ConditionStatus{}}
		for _, c := range clean {
			report.Clean[strings.TrimPrefix(c.Type, workloadv1alpha1.CleanCondition(""))] = c.Status
		}
		r.Reports.Set(report)
	}
	return ctrl.Result{RequeueAfter: r.Period}, nil
}

// ensureReport reports the member into the SyncTarget's status: its StorageClasses, the
// synced resource types and, per storage domain of the target and of the member's classes,
// whether it is clean. It returns the Clean conditions the status now holds; none when
// there is no SyncTarget.
func (r *Reconciler) ensureReport(ctx context.Context, classes []storagev1.StorageClass) ([]metav1.Condition, error) {
	st := &workloadv1alpha1.SyncTarget{}
	if err := r.Hub.Get(ctx, client.ObjectKey{Name: r.SyncTargetName}, st); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	clean, err := r.clean(ctx, classes, st.Spec.StorageDomains)
	if err != nil {
		return nil, err
	}
	clients, err := r.fenceClients(ctx, st.Spec.Fencing)
	if err != nil {
		return nil, err
	}
	return clean, r.ensureStatus(ctx, st, classes, clean, clients)
}

// ensureStatus writes the report into the SyncTarget's status, when it changed.
func (r *Reconciler) ensureStatus(ctx context.Context, st *workloadv1alpha1.SyncTarget, classes []storagev1.StorageClass, clean []metav1.Condition,
	clients *workloadv1alpha1.FenceClientsReport) error {
	infos := make([]workloadv1alpha1.StorageClassInfo, 0, len(classes))
	for i := range classes {
		infos = append(infos, classInfo(&classes[i]))
	}
	slices.SortFunc(infos, func(a, b workloadv1alpha1.StorageClassInfo) int { return strings.Compare(a.Name, b.Name) })
	changed := slices.ContainsFunc(clean, func(c metav1.Condition) bool { return status.Changed(st.Status.Conditions, c) })
	if !changed && equality.Semantic.DeepEqual(st.Status.StorageClasses, infos) && equality.Semantic.DeepEqual(st.Status.SyncedResources, r.SyncedResources) &&
		equality.Semantic.DeepEqual(st.Status.FenceClients, clients) {
		return nil
	}
	conditions := make([]metav1.Condition, 0, len(clean))
	for _, c := range clean {
		conditions = append(conditions, status.Condition(st.Status.Conditions, c))
	}
	report := &workloadv1alpha1.SyncTarget{
		ObjectMeta: metav1.ObjectMeta{Name: st.Name},
		Status:     workloadv1alpha1.SyncTargetStatus{StorageClasses: infos, SyncedResources: r.SyncedResources, Conditions: conditions, FenceClients: clients},
	}
	if err := status.Apply(ctx, r.Hub, report, transform.FieldManager); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Reported the member's storage classes", "storageClasses", len(infos), "syncedResources", len(r.SyncedResources))
	return nil
}

// fenceClients is what the member's storage reports of its clients for the NetworkFenceClass
// of the target's spec.fencing: csi-addons asks the driver (GetFenceClients) for each class
// and writes the answers into the member's CSIAddonsNodes, one per sidecar, which the report
// merges by client id. Nil when the target has no spec.fencing, the member serves no
// CSIAddonsNodes, or none reports the class.
func (r *Reconciler) fenceClients(ctx context.Context, spec *workloadv1alpha1.FencingSpec) (*workloadv1alpha1.FenceClientsReport, error) {
	if spec == nil {
		return nil, nil
	}
	nodes := &csiaddonsv1alpha1.CSIAddonsNodeList{}
	switch err := r.MemberReader.List(ctx, nodes); {
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return nil, nil
	case apierrors.IsForbidden(err):
		// A member role from before the report: the rest of the report must not wait on it.
		ctrl.LoggerFrom(ctx).V(1).Info("Not reporting the storage's fence clients: the syncer may not list CSIAddonsNodes in its member")
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the member's CSIAddonsNodes: %w", err)
	}
	byID := map[string][]string{}
	reported := false
	for _, n := range nodes.Items {
		for _, st := range n.Status.NetworkFenceClientStatus {
			if st.NetworkFenceClassName != spec.NetworkFenceClassName {
				continue
			}
			reported = true
			for _, c := range st.ClientDetails {
				byID[c.Id] = append(byID[c.Id], c.Cidrs...)
			}
		}
	}
	if !reported {
		return nil, nil
	}
	out := &workloadv1alpha1.FenceClientsReport{NetworkFenceClassName: spec.NetworkFenceClassName}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		cidrs := byID[id]
		slices.Sort(cidrs)
		out.Clients = append(out.Clients, workloadv1alpha1.FenceClient{ID: id, CIDRs: slices.Compact(cidrs)})
	}
	return out, nil
}

// clean tells, per storage domain of the target and of the member's classes, whether the
// member holds a volume of the domain that the hub no longer gives the target: a bound claim
// the syncer made, a PV standing for a hub PV, or a PV the member provisioned and the syncer
// upsynced, whose hub object is not synced to the target. A PV stays while the storage has it
// attached (its attacher's finalizer), so the member is clean only once the storage let go of
// it. A target back from a Fence is unfenced only once every such condition of the fenced
// domain is True; which domains an object counts against is fencing's decision
// (fencing.Unclean): one whose domain cannot be told counts against all of them.
func (r *Reconciler) clean(ctx context.Context, classes []storagev1.StorageClass, domains []string) ([]metav1.Condition, error) {
	claims, err := r.given(ctx, transform.PVCGVK)
	if err != nil {
		return nil, err
	}
	heldClaim := func(c *packedcache.Object, key types.NamespacedName) bool {
		phase, _ := c.NestedString("status", "phase")
		_, given := claims[key]
		return phase == string(corev1.ClaimBound) && !given
	}
	heldClaims, err := r.held(ctx, transform.PVCGVK, heldClaim)
	if err != nil {
		return nil, err
	}
	volumes, err := r.given(ctx, transform.PVGVK)
	if err != nil {
		return nil, err
	}
	heldVolume := func(pv *packedcache.Object, key types.NamespacedName) bool {
		if hubPV, hubClaim, ok := r.Target.Origin(pv); ok && !r.Target.Owns(pv) {
			claim, given := claims[hubClaim]
			_, recorded := volumes[hubPV]
			return !recorded && !(given && transform.UpsyncedFor(hubPV.Name, claim))
		}
		_, given := volumes[key]
		return !given
	}
	heldVolumes, err := r.held(ctx, transform.PVGVK, heldVolume)
	if err != nil {
		return nil, err
	}
	return cleanConditions(fencing.Unclean(domains, reportedClasses(classes), append(heldClaims, heldVolumes...))), nil
}

// cleanConditions turns the held objects of each domain into its Clean condition.
func cleanConditions(unclean map[string][]string) []metav1.Condition {
	out := make([]metav1.Condition, 0, len(unclean))
	for d, objs := range unclean {
		c := metav1.Condition{Type: workloadv1alpha1.CleanCondition(d), Status: metav1.ConditionTrue, Reason: "Clean",
			Message: "the member holds no volume of storage domain " + d + " that the hub does not give it"}
		if len(objs) > 0 {
			c.Status, c.Reason = metav1.ConditionFalse, "HoldsVolumes"
			c.Message = fmt.Sprintf("the member still holds %d claims or volumes of storage domain %s that the hub no longer gives it, e.g. %s", len(objs), d, objs[0])
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// reportedClasses is what the clean report reads of the member's StorageClasses, by name.
func reportedClasses(classes []storagev1.StorageClass) map[string]fencing.Class {
	out := make(map[string]fencing.Class, len(classes))
	for _, c := range classes {
		out[c.Name] = fencing.Class{Provisioner: c.Provisioner, Domain: c.Annotations[storagev1alpha1.DomainAnnotation]}
	}
	return out
}

// given are the hub objects of kind gvk synced to the target (the cache holds those labelled
// Sync or Upsync for it) and not asked to leave it, by key: one the hub is taking away counts
// as held until the member let go of it, so that a report made from a view of the hub that
// has not yet seen a Fence take it is not clean.
func (r *Reconciler) given(ctx context.Context, gvk schema.GroupVersionKind) (map[types.NamespacedName]metav1.Object, error) {
	// The list is only read, packed: the cache's own objects do.
	synced := packedcache.NewList(gvk)
	if err := r.Hub.List(ctx, synced, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	given := make(map[types.NamespacedName]metav1.Object, len(synced.Items))
	for i := range synced.Items {
		if !r.Target.RemovalRequested(&synced.Items[i]) {
			given[client.ObjectKeyFromObject(&synced.Items[i])] = &synced.Items[i]
		}
	}
	return given, nil
}

// held returns each object of kind gvk in the member that stands for a hub object, made or
// upsynced by the syncer, and that the hub no longer gives the target according to holds.
// Every such object is returned, whatever its class says: where it lives is fencing's to tell.
func (r *Reconciler) held(ctx context.Context, gvk schema.GroupVersionKind, holds func(*packedcache.Object, types.NamespacedName) bool) ([]fencing.Held, error) {
	// The member's cache holds every claim and PV; they are read packed, in place.
	list := packedcache.NewList(gvk)
	if err := r.Member.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("reading the member's %s: %w", gvk.Kind, err)
	}
	var out []fencing.Held
	for i := range list.Items {
		obj := &list.Items[i]
		if key, ok := r.Target.Upstream(obj, false); ok && holds(obj, key) {
			out = append(out, heldObject(gvk.Kind+" "+key.String(), obj))
		}
	}
	return out, nil
}

// Annotations in which a member's claim or PV names the driver that provisioned its volume.
var provisionerAnnotations = []string{
	"volume.kubernetes.io/storage-provisioner",
	"volume.beta.kubernetes.io/storage-provisioner",
	"pv.kubernetes.io/provisioned-by",
}

// heldObject is what the clean report reads of a held claim or PV: its class, the driver of
// its volume (a PV's CSI driver, or the annotation the member's binder or provisioner wrote)
// and the storage domain it names itself.
func heldObject(name string, obj *packedcache.Object) fencing.Held {
	h := fencing.Held{Name: name}
	h.Domain, _ = transform.Annotation(obj, storagev1alpha1.DomainAnnotation)
	h.Class, _ = obj.NestedString("spec", "storageClassName")
	h.Provisioner, _ = obj.NestedString("spec", "csi", "driver")
	for _, a := range provisionerAnnotations {
		if h.Provisioner == "" {
			h.Provisioner, _ = transform.Annotation(obj, a)
		}
	}
	return h
}

// classInfo is what the SyncTarget reports of one StorageClass.
func classInfo(sc *storagev1.StorageClass) workloadv1alpha1.StorageClassInfo {
	info := workloadv1alpha1.StorageClassInfo{
		Name:                 sc.Name,
		Provisioner:          sc.Provisioner,
		Parameters:           sc.Parameters,
		ReclaimPolicy:        ptr.Deref(sc.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode:    string(ptr.Deref(sc.VolumeBindingMode, storagev1.VolumeBindingImmediate)),
		AllowVolumeExpansion: ptr.Deref(sc.AllowVolumeExpansion, false),
		Domain:               sc.Annotations[storagev1alpha1.DomainAnnotation],
	}
	for _, a := range defaultClassAnnotations {
		info.Default = info.Default || sc.Annotations[a] == "true"
	}
	return info
}
