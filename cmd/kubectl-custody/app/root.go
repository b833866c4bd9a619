package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/api"
	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

var scheme = api.NewScheme()

// Run runs kubectl custody with the command-line arguments args (the program name left out)
// and returns the exit code. An error is written to streams.ErrOut as one line.
func Run(ctx context.Context, args []string, streams genericiooptions.IOStreams) int {
	config := genericclioptions.NewConfigFlags(true)
	// The plugin maps its few kinds itself and keeps no discovery cache.
	config.CacheDir = nil
	o := &options{config: config, streams: streams}
	cmd := o.command()
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(streams.ErrOut, "error: "+o.explain(err))
		return 1
	}
	return 0
}

// options are what every subcommand shares: the kubeconfig flags and the streams.
type options struct {
	config  *genericclioptions.ConfigFlags
	streams genericiooptions.IOStreams
	// host is the hub's address, once a client for it is made.
	host string
}

func (o *options) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kubectl-custody",
		Short: "Custody's volumes, sync targets, Fences and LocationPairs on the hub",
		Long: `kubectl custody shows what Custody does on the hub: the volumes it coordinates, with their
owner, sharers and phase, the sync targets with their Locations and health, the Fences that
cut lost targets off their storage, and the LocationPairs with their replication and the history of their
failovers and relocates. It joins member clusters (join registers a target
with a hub identity of its own and writes the manifest that runs its syncer) and unjoins
them (unjoin drains a target, then removes it and its identity), cordons and uncordons
targets, states that a lost target's member is powered off (fence --powered-off),
unfences targets, fails a LocationPair over or relocates it to its other Location, and
drills a pair's failover without disturbing it. It checks a hub across sites (hub status:
its etcd members, API servers and controller leader), exports the hub's Custody objects to a
file and imports them into an empty hub (hub export, hub import).`,
		Annotations:  map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl custody"},
		SilenceUsage: true,
		// Run prints the error once, on one line.
		SilenceErrors: true,
	}
	cmd.SetIn(o.streams.In)
	cmd.SetOut(o.streams.Out)
	cmd.SetErr(o.streams.ErrOut)
	o.config.AddFlags(cmd.PersistentFlags())
	cmd.AddCommand(
		o.volumesCommand(),
		o.targetsCommand(),
		o.describeCommand(),
		o.cordonCommand(true),
		o.cordonCommand(false),
		o.fencesCommand(),
		o.fenceCommand(),
		o.unfenceCommand(),
		o.pairsCommand(),
		o.historyCommand(),
		o.switchCommand(schedulingv1alpha1.Failover),
		o.switchCommand(schedulingv1alpha1.Relocate),
		o.drillCommand(),
		o.joinCommand(),
		o.unjoinCommand(),
		o.hubCommand(),
	)
	return cmd
}

// hub is a client of the hub API server and the namespace that the flags and the kubeconfig
// give.
type hub struct {
	client.Client
	namespace string
	// explicitNamespace: --namespace set the namespace.
	explicitNamespace bool
}

func (o *options) hub() (*hub, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	ns, explicit, err := o.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme, Mapper: restMapper()})
	if err != nil {
		return nil, err
	}
	return &hub{Client: c, namespace: ns, explicitNamespace: explicit}, nil
}

// restConfig is the kubeconfig's config of the hub, whose warnings go to stderr as kubectl
// prints them. It keeps the hub's address for the errors.
func (o *options) restConfig() (*rest.Config, error) {
	cfg, err := o.config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	cfg.WarningHandler = rest.NewWarningWriter(o.streams.ErrOut, rest.WarningWriterOptions{})
	o.host = cfg.Host
	return cfg, nil
}

// restMapper maps the kinds the plugin reads without asking the hub, so that no discovery
// precedes a command and an unreachable hub fails on the command's own request.
func restMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(storagev1alpha1.GroupVersion.WithKind("VolumeOwnership"), meta.RESTScopeNamespace)
	m.Add(storagev1alpha1.GroupVersion.WithKind("Fence"), meta.RESTScopeRoot)
	m.Add(corev1.SchemeGroupVersion.WithKind("PersistentVolume"), meta.RESTScopeRoot)
	m.Add(corev1.SchemeGroupVersion.WithKind("Event"), meta.RESTScopeNamespace)
	m.Add(workloadv1alpha1.GroupVersion.WithKind("SyncTarget"), meta.RESTScopeRoot)
	m.Add(coordinationv1.SchemeGroupVersion.WithKind("Lease"), meta.RESTScopeNamespace)
	m.Add(schedulingv1alpha1.GroupVersion.WithKind("Location"), meta.RESTScopeRoot)
	m.Add(schedulingv1alpha1.GroupVersion.WithKind("LocationPair"), meta.RESTScopeRoot)
	m.Add(schedulingv1alpha1.GroupVersion.WithKind("Drill"), meta.RESTScopeRoot)
	m.Add(storagev1alpha1.GroupVersion.WithKind("VolumeReplication"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("ServiceAccount"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	m.Add(corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"), meta.RESTScopeRoot)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("Role"), meta.RESTScopeNamespace)
	m.Add(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), meta.RESTScopeNamespace)
	return m
}

// notFound says that the named object does not exist when err says so, and returns any other
// error as it is.
func notFound(err error, kind, name string) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%s %q not found", kind, name)
	}
	return err
}

// explain turns an error into the one line printed after "error: ". A request that never got
// an answer names the hub rather than the URL of the request.
func (o *options) explain(err error) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Sprintf("cannot reach the hub at %s: %v", o.host, uerr.Err)
	}
	var lines []string
	for l := range strings.Lines(err.Error()) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}
