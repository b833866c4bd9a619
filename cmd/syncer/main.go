package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ktypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/controllers/syncer"
)

// resources is a flag of resource types, as resource.group, repeated or comma-separated.
type resources []schema.GroupVersionResource

func (r *resources) String() string {
	names := make([]string, 0, len(*r))
	for _, gvr := range *r {
		names = append(names, gvr.GroupResource().String())
	}
	return strings.Join(names, ",")
}

func (r *resources) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		gr := schema.ParseGroupResource(name)
		*r = append(*r, gr.WithVersion(""))
	}
	return nil
}

// secretKey is a flag of a Secret's NAMESPACE/NAME.
type secretKey ktypes.NamespacedName

func (k *secretKey) String() string {
	if k.Name == "" {
		return ""
	}
	return k.Namespace + "/" + k.Name
}

func (k *secretKey) Set(v string) error {
	ns, name, ok := strings.Cut(v, "/")
	if !ok || ns == "" || name == "" {
		return fmt.Errorf("%q is not NAMESPACE/NAME", v)
	}
	k.Namespace, k.Name = ns, name
	return nil
}

func main() {
	var (
		hubKubeconfig, memberKubeconfig string
		o                               syncer.Options
		types                           resources
		hubSecret                       secretKey
		metricsSecure                   bool
	)
	flag.StringVar(&hubKubeconfig, "hub-kubeconfig", "", "Kubeconfig of the hub.")
	flag.Var(&hubSecret, "hub-kubeconfig-secret", "NAMESPACE/NAME of the member Secret that holds the hub kubeconfig (key kubeconfig), where the syncer keeps each hub token it renews; empty: none.")
	flag.Func("hub-servers", "Every API server of a hub across sites, as URLs separated by commas: the syncer reaches whichever answers, with the hub kubeconfig's credential and CA; empty: the kubeconfig's server alone.", func(v string) error {
		o.HubServers = slices.DeleteFunc(strings.Split(v, ","), func(s string) bool { return s == "" })
		return nil
	})
	flag.StringVar(&memberKubeconfig, "member-kubeconfig", "", "Kubeconfig of the member; empty: --kubeconfig, $KUBECONFIG or the in-cluster config.")
	flag.StringVar(&o.SyncTargetName, "sync-target-name", "", "Name of the SyncTarget this syncer serves.")
	flag.Var(&types, "resources", "Resource types to sync, as resource.group (deployments.apps), repeated or comma-separated. Default: "+
		(*resources)(&syncer.DefaultResources).String()+".")
	flag.DurationVar(&o.HeartbeatPeriod, "heartbeat-period", syncer.DefaultHeartbeatPeriod, "How often to renew the heartbeat Lease on the hub.")
	flag.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", `Address of the metrics endpoint; "0" turns it off.`)
	flag.BoolVar(&metricsSecure, "metrics-secure", true, "Serve the metrics over HTTPS, only to callers the member authenticates and allows to get /metrics (the ClusterRole custody-metrics-reader). false serves plain HTTP to anyone: for a syncer on a developer's machine only.")
	flag.StringVar(&o.MetricsCertDir, "metrics-cert-dir", "", "Directory of the metrics endpoint's tls.crt and tls.key; empty, or without them: a self-signed certificate made at start.")
	flag.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", `Address of the health probe endpoint; "0" turns it off.`)
	flag.StringVar(&o.PprofAddr, "pprof-bind-address", "0", `Address of the pprof endpoints (/debug/pprof/), plain HTTP to anyone: bind it to localhost; "0" turns them off.`)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	if hubKubeconfig == "" || o.SyncTargetName == "" {
		fmt.Fprintln(os.Stderr, "--hub-kubeconfig and --sync-target-name are required")
		flag.Usage()
		os.Exit(2)
	}
	var err error
	if o.HubConfig, err = clientcmd.BuildConfigFromFlags("", hubKubeconfig); err != nil {
		log.Error(err, "Reading the hub kubeconfig")
		os.Exit(1)
	}
	if memberKubeconfig == "" {
		o.MemberConfig, err = ctrl.GetConfig()
	} else {
		o.MemberConfig, err = clientcmd.BuildConfigFromFlags("", memberKubeconfig)
	}
	if err != nil {
		log.Error(err, "Reading the member kubeconfig")
		os.Exit(1)
	}
	o.InsecureMetrics = !metricsSecure
	o.HubKubeconfigSecret = ktypes.NamespacedName(hubSecret)
	if len(types) > 0 {
		o.Resources = types
	}
	if err := syncer.Run(ctrl.SetupSignalHandler(), o); err != nil {
		log.Error(err, "The syncer stopped")
		os.Exit(1)
	}
}
