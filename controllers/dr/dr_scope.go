package dr

import (
	"context"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/leases"
	"github.com/custody-dev/custody/coordination/dr"
	"github.com/custody-dev/custody/fencing"
)

// defaultThreshold is the failover threshold of a pair whose spec has none, as the CRD
// defaults it.
const defaultThreshold = 5 * time.Minute

// scope is what one reconcile of a pair read.
type scope struct {
	pair         *schedulingv1alpha1.LocationPair
	replications map[string]*storagev1alpha1.VolumeReplication // by namespace/name
	ownerships   map[string]*storagev1alpha1.VolumeOwnership   // by namespace/name
	claims       map[string]*corev1.PersistentVolumeClaim      // by namespace/name
	// namespaces are the namespaces the pair's Placements bind.
	namespaces []*corev1.Namespace
	// workloads are their Deployments and StatefulSets, by dr.Workload.Key.
	workloads map[string]client.Object
	targets   []workloadv1alpha1.SyncTarget
	fences    []storagev1alpha1.Fence
}

// observe reads the pair's Locations, their targets and Fences, and the volumes of the
// namespaces its Locations run, into the decision's Observation.
func (r *Reconciler) observe(ctx context.Context, p *schedulingv1alpha1.LocationPair, now time.Time) (*scope, dr.Observation, error) {
	s := &scope{pair: p, replications: map[string]*storagev1alpha1.VolumeReplication{}, ownerships: map[string]*storagev1alpha1.VolumeOwnership{},
		claims: map[string]*corev1.PersistentVolumeClaim{}}
	interval, err := dr.Interval(p.Spec.ReplicationInterval)
	if err != nil {
		return nil, dr.Observation{}, err
	}
	schedule, err := dr.Schedule(p.Spec.ReplicationInterval)
	if err != nil {
		return nil, dr.Observation{}, err
	}
	o := dr.Observation{
		Now: now, Active: p.Status.ActiveLocation, Action: p.Status.LastAction, History: p.Status.History, Locations: map[string]dr.Location{},
		Pair: dr.Pair{
			Primary: p.Spec.Primary, Secondary: p.Spec.Secondary, Declared: p.Spec.ActiveLocation, Generation: p.Generation,
			Mode: p.Spec.SwitchMode, Automatic: p.Spec.AutomaticFailover == nil || *p.Spec.AutomaticFailover,
			Threshold: defaultThreshold, Interval: interval, Schedule: schedule, Classes: p.Spec.StorageClassMap,
		},
	}
	if o.Pair.Mode == "" {
		o.Pair.Mode = schedulingv1alpha1.Relocate
	}
	if t := p.Spec.FailoverThreshold; t != nil {
		o.Pair.Threshold = t.Duration
	}
	locations := &schedulingv1alpha1.LocationList{}
	targets := &workloadv1alpha1.SyncTargetList{}
	fences := &storagev1alpha1.FenceList{}
	for _, list := range []client.ObjectList{locations, targets, fences} {
		if err := r.Client.List(ctx, list); err != nil {
			return nil, o, err
		}
	}
	s.targets, s.fences = targets.Items, fences.Items
	o.Brake, o.Targets = r.Brake, len(targets.Items)
	for i := range targets.Items {
		if t := &targets.Items[i]; !t.IsReady() && !t.UnreachableSince().IsZero() {
			o.Unreachable++
		}
	}
	for _, name := range []string{p.Spec.Primary, p.Spec.Secondary} {
		members, ok := schedulingv1alpha1.LocationTargets(name, locations.Items, targets.Items)
		l := dr.Location{Name: name, Found: ok}
		for i := range members {
			lease, err := leases.Of(ctx, r.Client, members[i].Name)
			if err != nil {
				return nil, o, err
			}
			l.Targets = append(l.Targets, target(&members[i], lease, fences.Items))
		}
		o.Locations[name] = l
	}
	if err := volumes(ctx, r.Client, s, &o); err != nil {
		return nil, o, err
	}
	s.workloads = map[string]client.Object{}
	names := make([]string, 0, len(s.namespaces))
	for _, ns := range s.namespaces {
		names = append(names, ns.Name)
	}
	err = workloads(ctx, r.Client, names, func(w dr.Workload, obj client.Object) {
		o.Workloads = append(o.Workloads, w)
		s.workloads[w.Key()] = obj
	})
	if err != nil {
		return nil, o, err
	}
	if o.Drills, err = drillRecords(ctx, r.Client, p); err != nil {
		return nil, o, err
	}
	return s, o, nil
}

// workloads reads the Deployments and StatefulSets of the namespaces, handing each to add.
func workloads(ctx context.Context, c client.Reader, namespaces []string, add func(dr.Workload, client.Object)) error {
	each := func(kind string, obj client.Object, replicas *int32, ready int32) {
		add(dr.Workload{Namespace: obj.GetNamespace(), Kind: kind, Name: obj.GetName(), Replicas: ptr.Deref(replicas, 1), Ready: ready, Reported: statusWritten(obj)}, obj)
	}
	for _, ns := range namespaces {
		deployments, sets := &appsv1.DeploymentList{}, &appsv1.StatefulSetList{}
		for _, list := range []client.ObjectList{deployments, sets} {
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				return err
			}
		}
		for i := range deployments.Items {
			d := &deployments.Items[i]
			each("Deployment", d, d.Spec.Replicas, d.Status.ReadyReplicas)
		}
		for i := range sets.Items {
			set := &sets.Items[i]
			each("StatefulSet", set, set.Spec.Replicas, set.Status.ReadyReplicas)
		}
	}
	return nil
}

// statusWritten is when the object's status was last written, as its managed fields tell.
func statusWritten(obj client.Object) time.Time {
	var t time.Time
	for _, f := range obj.GetManagedFields() {
		if f.Subresource == "status" && f.Time != nil && f.Time.After(t) {
			t = f.Time.Time
		}
	}
	return t
}

// target is what the decision reads of one SyncTarget, and of its heartbeat Lease (nil: none).
func target(t *workloadv1alpha1.SyncTarget, lease *coordinationv1.Lease, fences []storagev1alpha1.Fence) dr.Target {
	out := dr.Target{Key: workloadv1alpha1.ToSyncTargetKey(t.Name), Ready: t.IsReady(), UnreachableSince: t.UnreachableSince(), ReadySince: t.ReadySince(), Clean: true,
		Cordoned: t.Spec.Unschedulable, Unverified: fencing.Unverified(t)}
	for _, c := range t.Status.StorageClasses {
		out.Classes = append(out.Classes, c.Name)
		if c.Default {
			out.DefaultClass = c.Name
		}
	}
	out.Reported = t.CleanReportedAt(lease, t.Spec.StorageDomains...)
	for _, d := range t.Spec.StorageDomains {
		out.Clean = out.Clean && t.IsClean(d)
	}
	held := 0
	for i := range fences {
		f := &fences[i]
		if f.Spec.TargetName != t.Name {
			continue
		}
		switch s := fencing.Of(f); {
		case s == fencing.Unfencing || out.Fence == fencing.Unfencing:
			out.Fence = fencing.Unfencing
		case s.Holds():
			held++
		case out.Fence == fencing.Unfenced || out.Fence == fencing.Fenced:
			out.Fence = s
		}
	}
	if out.Fence == fencing.Unfenced && held > 0 {
		out.Fence = fencing.Fencing
		if held >= len(t.Spec.StorageDomains) {
			out.Fence = fencing.Fenced
		}
	}
	return out
}

// volumes reads the network volumes of the namespaces bound to a Placement of either of the
// pair's Locations, with their VolumeReplications of the pair.
func volumes(ctx context.Context, c client.Reader, s *scope, o *dr.Observation) error {
	placements := &schedulingv1alpha1.PlacementList{}
	namespaces := &corev1.NamespaceList{}
	ownerships := &storagev1alpha1.VolumeOwnershipList{}
	replications := &storagev1alpha1.VolumeReplicationList{}
	claims := &corev1.PersistentVolumeClaimList{}
	for _, list := range []client.ObjectList{placements, namespaces, ownerships, claims} {
		if err := c.List(ctx, list); err != nil {
			return err
		}
	}
	if err := c.List(ctx, replications, client.MatchingLabels{schedulingv1alpha1.PairLabel: s.pair.Name}); err != nil {
		return err
	}
	var ours []string
	for _, pl := range placements.Items {
		if s.pair.Has(pl.Status.SelectedLocation) {
			ours = append(ours, pl.Name)
		}
	}
	protected := map[string]bool{}
	for i := range namespaces.Items {
		ns := &namespaces.Items[i]
		if ns.Labels[schedulingv1alpha1.DrillLabel] != "" {
			continue // a Drill's sandbox
		}
		for _, name := range strings.Split(ns.Annotations[schedulingv1alpha1.PlacementAnnotation], ",") {
			if name != "" && slices.Contains(ours, name) && !protected[ns.Name] {
				protected[ns.Name] = true
				s.namespaces = append(s.namespaces, ns)
			}
		}
	}
	for i := range replications.Items {
		vr := &replications.Items[i]
		s.replications[vr.Namespace+"/"+vr.Name] = vr
	}
	for i := range claims.Items {
		if c := &claims.Items[i]; protected[c.Namespace] {
			s.claims[c.Namespace+"/"+c.Name] = c
		}
	}
	for i := range ownerships.Items {
		vo := &ownerships.Items[i]
		if !protected[vo.Namespace] || vo.Status.Class == storagev1alpha1.Internal || vo.Status.Class == "" {
			continue
		}
		k := vo.Namespace + "/" + vo.Name
		s.ownerships[k] = vo
		v := volume(vo, s.replications[k], s.claims[k])
		if c := s.claims[k]; c != nil && storagev1alpha1.Unprotected(c.Labels) {
			o.Unprotected = append(o.Unprotected, v)
			continue
		}
		o.Volumes = append(o.Volumes, v)
	}
	o.Quiesced = !slices.ContainsFunc(o.Volumes, func(v dr.Volume) bool { return v.Replication != nil && !v.Replication.Quiesced })
	return nil
}

// volume is what the decision reads of a claim's record, its VolumeReplication and the claim
// itself (either nil when there is none).
func volume(vo *storagev1alpha1.VolumeOwnership, vr *storagev1alpha1.VolumeReplication, c *corev1.PersistentVolumeClaim) dr.Volume {
	v := dr.Volume{Namespace: vo.Namespace, Claim: vo.Name, Owner: vo.Status.Owner,
		Bound: vo.Status.Phase == storagev1alpha1.Bound, Replica: vo.Status.Replica}
	if a := vo.Status.SetAside; a != nil {
		v.SetAsideAt = a.Time.Time
	}
	if vr != nil {
		v.Replication = replication(vr)
	}
	if c != nil {
		if a, ok := c.Annotations[storagev1alpha1.RestoreAnnotation]; ok {
			v.Restore = &a
		}
		v.StorageClass, v.NamedClass = storagev1alpha1.ClaimClass(c.Annotations, c.Spec.StorageClassName), c.Spec.StorageClassName
	}
	return v
}

// replication is what the decision reads of a VolumeReplication's reports.
func replication(vr *storagev1alpha1.VolumeReplication) *dr.Replication {
	out := &dr.Replication{Source: vr.Spec.Source, Destination: vr.Spec.Destination, Class: vr.Spec.StorageClassName, KeepImages: vr.Spec.KeepImages}
	if src := vr.Status.Source; src != nil && src.ReportedBy != "" && workloadv1alpha1.ToSyncTargetKey(src.ReportedBy) == vr.Spec.Source {
		out.LastManualSync, out.Quiesced = src.LastManualSync, src.Quiesced
		if src.LastSyncTime != nil {
			out.SourceLastSync, out.SourceLastSyncStart = src.LastSyncTime.Time, src.LastSyncStart()
		}
		if src.Message != "" && src.Result == "Failed" {
			out.Failed, out.Message = true, src.Message
		}
	}
	if dst := vr.Status.Destination; dst != nil && dst.ReportedBy != "" && workloadv1alpha1.ToSyncTargetKey(dst.ReportedBy) == vr.Spec.Destination {
		if dst.LastSyncTime != nil {
			out.DestinationLastSync = dst.LastSyncTime.Time
		}
		if t := dr.ImageTime(vr); dst.LatestImage != "" && t != nil {
			out.Image = &storagev1alpha1.Replica{Target: vr.Spec.Destination, Snapshot: dst.LatestImage, Time: *t}
			out.ImageReady, out.ImageKept = dst.LatestImageReady, dst.LatestImageKept
		}
		if dst.Result == "Failed" && !out.Failed {
			out.Failed, out.Message = true, dst.Message
		}
	}
	return out
}
