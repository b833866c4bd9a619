package faults

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/test/simstorage"
)

// observer watches every version of the hub's claims and PVs and of the members' PVs, as
// their API servers deliver them, and records what breaks the protocol's invariants.
type observer struct {
	mu sync.Mutex
	// breaches are the hub versions that broke invariant 1, by namespace.
	breaches map[string][]string
	// claims maps a volume handle to the hub claim its hub PV is bound to, namespace/name;
	// hubPVs to the hub PV's name.
	claims, hubPVs map[string]string
	// deletes are the member PVs seen with reclaimPolicy Delete, by handle; retained the
	// member PVs seen Retain before.
	deletes  map[string][]deletePolicy
	retained map[string]bool
	// placed are the targets each hub namespace is in Sync on.
	placed map[string][]string
}

// deletePolicy is one member PV seen with reclaimPolicy Delete.
type deletePolicy struct {
	member, pv string
	// wasRetain: the same PV was seen Retain before.
	wasRetain bool
	at        time.Time
}

// watch starts watching the hub and each member until ctx ends, and returns once the
// watches have listed.
func watch(ctx context.Context, hub *rest.Config, members map[string]*rest.Config) (*observer, error) {
	o := &observer{breaches: map[string][]string{}, claims: map[string]string{}, hubPVs: map[string]string{}, deletes: map[string][]deletePolicy{}, retained: map[string]bool{}, placed: map[string][]string{}}
	if err := inform(ctx, hub, []kind{
		{"persistentvolumeclaims", &corev1.PersistentVolumeClaim{}, o.hubObject},
		{"persistentvolumes", &corev1.PersistentVolume{}, o.hubObject},
		{"namespaces", &corev1.Namespace{}, o.namespace},
	}); err != nil {
		return nil, fmt.Errorf("watching the hub: %w", err)
	}
	for name, cfg := range members {
		if err := inform(ctx, cfg, []kind{
			{"persistentvolumes", &corev1.PersistentVolume{}, func(obj any) { o.memberPV(name, obj) }},
		}); err != nil {
			return nil, fmt.Errorf("watching %s: %w", name, err)
		}
	}
	return o, nil
}

// kind is a core resource the observer watches, and what it does with each version.
type kind struct {
	resource string
	obj      runtime.Object
	handle   func(any)
}

// watchBackoff paces a reflector's list and watch after a watch broke: an informer's
// backoff grows to a minute while the hub restarts every few seconds, and the observer would
// not see what happens meanwhile.
var watchBackoff = wait.Backoff{Duration: 100 * time.Millisecond, Cap: time.Second, Steps: 100, Factor: 2, Jitter: 0.1}

// inform lists and watches each kind on the cluster until ctx ends, handing every version
// its API server delivers to the kind's function, and returns once each has listed.
func inform(ctx context.Context, cfg *rest.Config, kinds []kind) error {
	cs, err := kubernetes.NewForConfig(reconnect.Config(cfg))
	if err != nil {
		return err
	}
	recovery := reconnect.New()
	var reflectors []*toolscache.Reflector
	for _, k := range kinds {
		lw := recovery.ListerWatcher(toolscache.NewListWatchFromClient(cs.CoreV1().RESTClient(), k.resource, metav1.NamespaceAll, fields.Everything()))
		r := toolscache.NewReflectorWithOptions(lw, k.obj, handing(k.handle), toolscache.ReflectorOptions{Name: "observer " + k.resource, Backoff: &watchBackoff})
		go r.RunWithContext(ctx)
		reflectors = append(reflectors, r)
	}
	return wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		return !slices.ContainsFunc(reflectors, func(r *toolscache.Reflector) bool { return r.LastSyncResourceVersion() == "" }), nil
	})
}

// handing is a reflector's store that keeps nothing: it hands every object the reflector
// adds or updates to the function.
type handing func(any)

func (h handing) Add(obj any) error    { h(obj); return nil }
func (h handing) Update(obj any) error { h(obj); return nil }
func (h handing) Delete(any) error     { return nil }
func (h handing) Resync() error        { return nil }
func (h handing) Replace(objs []any, _ string) error {
	for _, obj := range objs {
		h(obj)
	}
	return nil
}

// hubObject checks one version of a hub claim or PV: an owned volume has at most one target
// in Sync or Upsync, and a target in Upsync is the only one synced.
func (o *observer) hubObject(obj any) {
	var ns, what string
	var modes []corev1.PersistentVolumeAccessMode
	switch v := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		ns, what, modes = v.Namespace, "claim "+v.Namespace+"/"+v.Name, v.Spec.AccessModes
	case *corev1.PersistentVolume:
		if v.Spec.ClaimRef == nil {
			return
		}
		ns, what, modes = v.Spec.ClaimRef.Namespace, "PV "+v.Name, v.Spec.AccessModes
		if v.Spec.CSI != nil {
			o.mu.Lock()
			o.claims[v.Spec.CSI.VolumeHandle] = ns + "/" + v.Spec.ClaimRef.Name
			o.hubPVs[v.Spec.CSI.VolumeHandle] = v.Name
			o.mu.Unlock()
		}
	default:
		return
	}
	m := obj.(client.Object)
	var synced, upsync []string
	for key, p := range workloadv1alpha1.Presences(m) {
		if p.Synced() {
			synced = append(synced, key+"="+string(p.State))
		}
		if p.State == workloadv1alpha1.ResourceStateUpsync {
			upsync = append(upsync, key)
		}
	}
	slices.Sort(synced)
	if len(synced) > 1 && (simstorage.Owned(modes) || len(upsync) > 0) {
		o.mu.Lock()
		o.breaches[ns] = append(o.breaches[ns], fmt.Sprintf("%s at resourceVersion %s has %v", what, m.GetResourceVersion(), synced))
		o.mu.Unlock()
	}
}

// namespace records the targets a hub namespace is in Sync on.
func (o *observer) namespace(obj any) {
	if ns, ok := obj.(*corev1.Namespace); ok {
		on := synced(ns)
		o.mu.Lock()
		o.placed[ns.Name] = on
		o.mu.Unlock()
	}
}

// runsOn returns the target the namespace was last seen in Sync on, "" when none or several.
func (o *observer) runsOn(ns string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if on := o.placed[ns]; len(on) == 1 {
		return on[0]
	}
	return ""
}

// memberPV records the reclaim policy of one version of a member's PV.
func (o *observer) memberPV(member string, obj any) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok || pv.Spec.CSI == nil {
		return
	}
	key := member + "/" + pv.Name
	o.mu.Lock()
	defer o.mu.Unlock()
	switch pv.Spec.PersistentVolumeReclaimPolicy {
	case corev1.PersistentVolumeReclaimRetain:
		o.retained[key] = true
	case corev1.PersistentVolumeReclaimDelete:
		h := pv.Spec.CSI.VolumeHandle
		o.deletes[h] = append(o.deletes[h], deletePolicy{member: member, pv: pv.Name, wasRetain: o.retained[key], at: time.Now()})
	}
}

// handles returns the volume handles of the hub PVs bound to claims of the namespace.
func (o *observer) handles(ns string) map[string]string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := map[string]string{}
	for h, c := range o.claims {
		if cns, name, _ := strings.Cut(c, "/"); cns == ns {
			out[h] = name
		}
	}
	return out
}

// hubPV returns the name of the volume's hub PV.
func (o *observer) hubPV(handle string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.hubPVs[handle]
}

// protocolBreaches returns the hub versions of the namespace's objects that broke
// invariant 1.
func (o *observer) protocolBreaches(ns string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.breaches[ns])
}

// earlyDeletes returns the member PVs of the volume seen with reclaimPolicy Delete before
// deleteAsked (zero: never asked) while they were copies or had been Retain: provisionedIn
// is the member whose PV the storage provisioned, Delete until it is first made Retain.
func (o *observer) earlyDeletes(handle, provisionedIn string, deleteAsked time.Time) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	seen := map[string]bool{}
	for _, d := range o.deletes[handle] {
		if key := d.member + "/" + d.pv; !seen[key] && (d.wasRetain || d.member != provisionedIn) && (deleteAsked.IsZero() || d.at.Before(deleteAsked)) {
			seen[key] = true
			out = append(out, fmt.Sprintf("%s Delete at %s", key, d.at.Format("15:04:05.000")))
		}
	}
	return out
}
