package controllers

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	"github.com/custody-dev/custody/controllers/access"
	coordinationctrl "github.com/custody-dev/custody/controllers/coordination"
	drctrl "github.com/custody-dev/custody/controllers/dr"
	fencingctrl "github.com/custody-dev/custody/controllers/fencing"
	"github.com/custody-dev/custody/controllers/health"
	"github.com/custody-dev/custody/controllers/location"
	"github.com/custody-dev/custody/controllers/placement"
	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/controllers/scheduler"
	"github.com/custody-dev/custody/controllers/statefulset"
	storageclassctrl "github.com/custody-dev/custody/controllers/storageclass"
	"github.com/custody-dev/custody/controllers/workload"
	"github.com/custody-dev/custody/fencing"
	"github.com/custody-dev/custody/storageclass"
)

// Options configure the hub controllers.
type Options struct {
	// Resources are the namespaced types that follow their namespace's placement (claims in
	// the coordination controller, the others in the workload controller); nil means
	// workload.DefaultResources.
	Resources []schema.GroupVersionKind
	// HeartbeatGrace is how long a target may miss heartbeats before it is Unreachable;
	// zero means three of the periods its syncer announces.
	HeartbeatGrace time.Duration
	// FenceDelay is how long an owner may be Unreachable before its owned volumes wait for a
	// Fence of it instead of its acknowledgement; zero means three of its heartbeat graces.
	// A SyncTarget's spec.fenceDelay overrides it.
	FenceDelay time.Duration
	// Brake holds back automatic Fences and failovers while more than its share of the hub's
	// targets are lost at once; zero: no brake (cmd/controller's flags default to
	// fencing.DefaultBrake).
	Brake fencing.Brake
	// Recovery, when set, gives every controller a work queue whose items waiting out a
	// failure are retried as soon as an API server answers again.
	Recovery *reconnect.Recovery
}

// The controller writes Custody's labels, annotations and finalizers on hub objects, which
// config/admission's custody-protocol-keys policy allows only to identities with this verb.
// +kubebuilder:rbac:groups=workload.custody.dev,resources=protocolkeys,verbs=write

// CacheOptions are o for the cache of a manager that runs the hub controllers: of the
// RoleBindings and Roles, it holds only the grants of package access.
func CacheOptions(o cache.Options) cache.Options {
	granted, _ := labels.NewRequirement(access.TargetLabel, selection.Exists, nil)
	grants := labels.NewSelector().Add(*granted)
	o.ByObject = map[client.Object]cache.ByObject{
		&rbacv1.RoleBinding{}: {Label: grants},
		&rbacv1.Role{}:        {Label: grants},
	}
	return o
}

// Setup registers every hub controller with the manager.
func Setup(mgr ctrl.Manager, o Options) error {
	if o.Resources == nil {
		o.Resources = workload.DefaultResources
	}
	var opts controller.Options
	if o.Recovery != nil {
		opts.NewQueue = o.Recovery.NewQueue
	}
	c := mgr.GetClient()
	if err := (&placement.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-placement")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&location.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-location")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&scheduler.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-scheduler"), FenceDelay: o.FenceDelay, HeartbeatGrace: o.HeartbeatGrace}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&health.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-health"), Grace: o.HeartbeatGrace}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&fencingctrl.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-fencing")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&access.Namespaces{Client: c}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&access.Keys{Client: c}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&storageclassctrl.Reconciler{Client: c, Recorder: mgr.GetEventRecorder("custody-storageclass")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	// Coordination makes the claims follow their namespaces, in the writes of their steps.
	claims := corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	follow := slices.Contains(o.Resources, claims)
	if err := (&coordinationctrl.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("custody-coordination"), Compatible: storageclass.Compatible, FenceDelay: o.FenceDelay, HeartbeatGrace: o.HeartbeatGrace, Brake: o.Brake, FollowNamespaces: follow}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&drctrl.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("custody-dr"), Brake: o.Brake}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&drctrl.DrillReconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("custody-drill")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	if err := (&statefulset.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("custody-statefulset")}).SetupWithManager(mgr, opts); err != nil {
		return err
	}
	return workload.SetupWithManager(mgr, slices.DeleteFunc(slices.Clone(o.Resources), func(k schema.GroupVersionKind) bool { return k == claims }), opts)
}
