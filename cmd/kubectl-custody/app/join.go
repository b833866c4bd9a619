package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/config"
)

// joinFlags are the argument and flags of join.
type joinFlags struct {
	target         string
	domains        []string
	locationLabels []string
	fencingCIDRs   []string
	fenceClass     string
	syncerImage    string
	hubServers     []string
	output         string
	dryRun         bool
	credentialTTL  time.Duration
	// hubCA is the CA the plugin trusts the hub by, which the member's kubeconfig carries.
	hubCA []byte
}

func (o *options) joinCommand() *cobra.Command {
	f := &joinFlags{}
	cmd := &cobra.Command{
		Use:   "join TARGET --storage-domain DOMAIN [-o member.yaml]",
		Short: "Register a member cluster as a sync target, with a hub identity of its own, and write the manifest that runs its syncer",
		Long: `Register a member cluster on the hub as the sync target TARGET and write the one manifest
that runs its syncer in the member. On the hub it creates, or brings in line when they exist:

  - the ServiceAccount custody-system/custody-syncer-target-TARGET, the syncer's hub identity,
    which no other target shares; the ClusterRoleBinding of the same name grants it the
    ClusterRole custody-syncer-hub;
  - the Role and RoleBinding custody-system/custody-syncer-target-TARGET-token, which let that
    identity request tokens of itself and of no other ServiceAccount, so that the syncer renews
    its own credential, and read the ConfigMap custody-hub-identity, the identity a hub
    restored by kubectl custody hub import keeps;
  - last, the SyncTarget TARGET: its storage domains, its labels (--location-label), which
    Location instance selectors match, and its fencing (--fencing-cidrs with
    --network-fence-class). Labels and fencing that the flags do not name are left as they are.

The syncer's credential is a bound token of its identity, requested with the TokenRequest API,
that expires after --credential-ttl (at least 10m, the API server's shortest). The syncer
renews it itself, on its own ServiceAccount only, when less than half of its lifetime is left,
and keeps the renewed one in the member's Secret, so that its manifest must be applied before
the token expires. kubectl custody unjoin TARGET --revoke cuts the identity off at once. A
legacy token Secret custody-syncer-target-TARGET-token, which earlier versions of join made and
which never expires, is deleted, which revokes it.

The manifest, written to -o (stdout when absent or -), is config/member for TARGET: the
namespace custody-system, the syncer's ServiceAccount and roles there, the ConfigMap that
names TARGET, the syncer's Deployment (its image from --syncer-image), and the Secret
custody-syncer-hub-kubeconfig with a kubeconfig for the hub that carries the token and the
CA the plugin trusts the hub by. Its server is --hub-server, or the current context's; it must
be an address of the hub that the member's pods reach. A hub across sites has an API server in
each of its main sites: name each with --hub-server, and the syncer reaches whichever answers
(the first is the kubeconfig's; their serving certificate must be valid for its name). "kubectl apply -f member.yaml" against
the member is the only other step. join never prints a token to a terminal: with no -o and
stdout a terminal it refuses; write to a file, or pipe the manifest to kubectl apply.

Running join again gives the same result with a new token; the earlier one stays valid until
it expires. Before it writes anything, the hub checks the SyncTarget with a server-side dry
run, so that a name, domain or CIDR it would refuse stops join with nothing created. If a later
step fails, join deletes what it created in that run. With --dry-run every write is a
server-side dry run and the manifest, whose kubeconfig then carries no token, goes to stdout:
nothing is created, on the hub or in a file.`,
		Example: `  # Join the member of zone a, selected by Locations that match region=eu
  kubectl custody join eu-1a --storage-domain zone-a --location-label region=eu -o member.yaml
  kubectl --kubeconfig member.kubeconfig apply -f member.yaml

  # The same, straight into the member, with a token that lasts 20 minutes until its syncer renews it
  kubectl custody join eu-1a --storage-domain zone-a --credential-ttl 20m | kubectl --kubeconfig member.kubeconfig apply -f -

  # What join would create, without creating it
  kubectl custody join eu-1a --storage-domain zone-a --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.target = args[0]
			return o.join(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&f.domains, "storage-domain", nil, "A storage domain the member reaches; repeat it for each domain")
	fs.StringArrayVar(&f.locationLabels, "location-label", nil, "A label KEY=VALUE of the SyncTarget, for Location instance selectors; repeat it for each label")
	fs.StringSliceVar(&f.fencingCIDRs, "fencing-cidrs", nil, "The member's node addresses as its storage sees them, CIDRs separated by commas, which a NetworkFence cuts off; needs --network-fence-class")
	fs.StringVar(&f.fenceClass, "network-fence-class", "", "The csi-addons NetworkFenceClass that fences the member")
	fs.StringVar(&f.syncerImage, "syncer-image", "", "The syncer's image (default: the one config/syncer names)")
	fs.StringSliceVar(&f.hubServers, "hub-server", nil, hubServerUsage)
	fs.StringVarP(&f.output, "output", "o", "-", "The file to write the member's manifest to; - is stdout")
	fs.BoolVar(&f.dryRun, "dry-run", false, "Print the manifest and what join would write on the hub, and write nothing")
	fs.DurationVar(&f.credentialTTL, "credential-ttl", time.Hour, "How long the syncer's hub token lasts until the syncer renews it; at least 10m")
	_ = cmd.MarkFlagRequired("storage-domain")
	return cmd
}

// validate checks what the hub cannot check before join writes: the target's name and the
// flags that go together. The storage domains follow the SyncTarget's own rule, spelled here
// for a message that names the flag; the hub checks the rest with a dry run.
func (f *joinFlags) validate() error {
	if err := validateTargetName(f.target); err != nil {
		return err
	}
	for _, d := range f.domains {
		if errs := validation.IsDNS1123Label(d); len(errs) > 0 {
			return fmt.Errorf("--storage-domain %q is not a DNS label: %s", d, strings.Join(errs, "; "))
		}
	}
	if _, err := parseLabels(f.locationLabels); err != nil {
		return err
	}
	if (len(f.fencingCIDRs) == 0) != (f.fenceClass == "") {
		return errors.New("--fencing-cidrs and --network-fence-class go together: a NetworkFence needs both")
	}
	return checkCredentialTTL(f.credentialTTL)
}

// hubServerUsage is the help of --hub-server, which join and hub import share.
const hubServerUsage = "The hub's address as the members' pods reach it (default: the server of the current context). " +
	"For a hub across sites, every API server's, repeated or separated by commas: the syncer reaches whichever answers"

// defaultHubServers makes the hub's servers the current context's server, host, when the
// flags name none.
func (f *joinFlags) defaultHubServers(host string) {
	if len(f.hubServers) == 0 {
		f.hubServers = []string{host}
	}
}

// checkCredentialTTL refuses a --credential-ttl shorter than the API server gives.
func checkCredentialTTL(ttl time.Duration) error {
	if ttl < MinCredentialTTL {
		return fmt.Errorf("--credential-ttl %s is shorter than %s, the shortest token the API server gives", ttl, MinCredentialTTL)
	}
	return nil
}

// validateTargetName checks the name of a joined target, which every per-target label key
// and object name embeds and which the hub's admission policy reads from the syncer's
// identity as the target's key.
func validateTargetName(target string) error {
	if errs := validation.IsDNS1123Label(target); len(errs) > 0 {
		return fmt.Errorf("target name %q is not a DNS label: %s", target, strings.Join(errs, "; "))
	}
	if key := workloadv1alpha1.ToSyncTargetKey(target); key != target {
		return fmt.Errorf("target name %q is too long: its key would be %q, and the hub's admission policy takes the name for the key", target, key)
	}
	return nil
}

// parseLabels parses KEY=VALUE pairs.
func parseLabels(pairs []string) (map[string]string, error) {
	labels := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--location-label %q is not KEY=VALUE", p)
		}
		labels[k] = v
	}
	return labels, nil
}

// join checks the flags, connects to the hub and joins the target.
func (o *options) join(ctx context.Context, f *joinFlags) error {
	if err := f.validate(); err != nil {
		return err
	}
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	if f.hubCA, err = caOf(cfg); err != nil {
		return err
	}
	h, err := o.hub()
	if err != nil {
		return err
	}
	f.defaultHubServers(o.host)
	return o.joinHub(ctx, h.Client, f)
}

// joinHub writes the target's objects on the hub through c and its manifest to f.output.
// Nothing is left on the hub of a run that fails: the SyncTarget, checked first with a dry
// run, is written last, and what the run created is deleted when a later step fails.
func (o *options) joinHub(ctx context.Context, c client.Client, f *joinFlags) (err error) {
	if err := o.checkOutput(f); err != nil {
		return err
	}
	out, err := createManifest(f.output, f.dryRun)
	if err != nil {
		return err
	}
	defer out.discard()
	report := o.streams.Out
	if out.file == nil {
		report = o.streams.ErrOut
	}
	target := syncTargetOf(f)
	if err := checkSyncTarget(ctx, c, target); err != nil {
		return err
	}
	w := newHubWriter(c, report, f.dryRun)
	defer func() {
		if err != nil {
			err = errors.Join(err, w.rollback(ctx))
		}
	}()
	manifest, err := identity(ctx, w, f)
	if err != nil {
		return err
	}
	if err := out.stage(manifest); err != nil {
		return err
	}
	if err := w.ensure(ctx, target); err != nil {
		return err
	}
	return out.commit(o.streams.Out, report)
}

// identity writes the target's hub identity and returns the member's manifest, with a
// kubeconfig for that identity.
func identity(ctx context.Context, w *hubWriter, f *joinFlags) ([]byte, error) {
	for _, d := range []desired{serviceAccountOf(f.target), bindingOf(f.target), tokenRoleOf(f.target), tokenBindingOf(f.target)} {
		if err := w.ensure(ctx, d); err != nil {
			return nil, err
		}
	}
	ca, err := memberCA(ctx, w.c, f.hubCA)
	if err != nil {
		return nil, err
	}
	token := fmt.Sprintf("<a token of serviceaccount %s/%s, valid for %s>", custodyNamespace, identityName(f.target), f.credentialTTL)
	if !f.dryRun {
		var expires time.Time
		if token, expires, err = requestToken(ctx, w.c, f.target, f.credentialTTL); err != nil {
			return nil, err
		}
		fmt.Fprintf(w.report, "serviceaccount/%s token requested, expires %s\n", identityName(f.target), expires.UTC().Format(time.RFC3339))
	}
	// Once the new token is there: the member that holds the legacy one loses it now.
	if err := w.remove(ctx, legacyToken(f.target), "it held a token that never expires, now revoked"); err != nil {
		return nil, err
	}
	kubeconfig, err := hubKubeconfig(f.hubServers[0], ca, []byte(token), identityName(f.target))
	if err != nil {
		return nil, err
	}
	m := config.Member{SyncTarget: f.target, SyncerImage: f.syncerImage, HubKubeconfig: kubeconfig}
	if len(f.hubServers) > 1 {
		m.HubServers = f.hubServers
	}
	return config.RenderMember(m)
}

// isTerminal tells whether w is a terminal.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// checkOutput refuses to print a manifest that carries a token to a terminal, where it would
// stay in the scrollback and the terminal's logs.
func (o *options) checkOutput(f *joinFlags) error {
	if f.dryRun || (f.output != "-" && f.output != "") || !isTerminal(o.streams.Out) {
		return nil
	}
	return errors.New("the member's manifest carries a hub credential and stdout is a terminal: write it to a file with -o FILE, or pipe it, as in | kubectl --kubeconfig member.kubeconfig apply -f -")
}

// caOf is the CA that cfg trusts the hub by, if it names one.
func caOf(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 || cfg.CAFile == "" {
		return cfg.CAData, nil
	}
	ca, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("reading the hub's CA: %w", err)
	}
	return ca, nil
}
