package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/printers"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

type hubStatusFlags struct {
	servers         []string
	etcd            etcdFlags
	leaderNamespace string
	timeout         time.Duration
	output          string
}

func (o *options) hubStatusCommand() *cobra.Command {
	f := &hubStatusFlags{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Check the hub's etcd members, API servers and controller leader before relying on it",
		Long: `Check what a hub across sites needs to be relied on, layer by layer, and print a table for each:

  - etcd: each member of the hub's etcd, found from the member list of the endpoints that
    --etcd-endpoint names, with its health (its /health), whether it is the raft leader, its
    version, database size and raft term; and whether the cluster has quorum, a majority of
    its voting members healthy. Each member is asked at an endpoint given for it, else at the
    first client URL it advertises. Without --etcd-endpoint etcd is not checked, though each
    API server's readiness includes its own etcd check.
  - API servers: each server that --server names (default: the server of the kubeconfig in
    use) is asked its /readyz with the kubeconfig's credentials: ready or not, the checks that
    failed, and how long it took to answer. The hub's API servers share one serving
    certificate valid for each of their addresses, so the kubeconfig's CA verifies each.
  - controller: the controller's leader election Lease, read through a ready API server: the
    replica that holds it, when it last renewed it, its duration and how many times the
    leadership moved. A Lease that is missing, released or not renewed within its duration
    means that no replica leads.

The command exits 1, naming the reasons on stderr, when the hub is not safe to rely on: its
etcd has no quorum, no API server is ready, or no controller replica leads. Each check waits
at most --timeout for an answer, all at once.`,
		Example: `  # The API servers of both main sites, and the etcd members of the three sites
  kubectl custody hub status --server https://hub.site-a.example:6443,https://hub.site-b.example:6443 \
    --etcd-endpoint https://etcd.site-a.example:2379 --etcd-endpoint https://etcd.site-b.example:2379 \
    --etcd-endpoint https://etcd.witness.example:2379 \
    --etcd-cacert etcd-ca.crt --etcd-cert etcd-client.crt --etcd-key etcd-client.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.hubStatus(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	// It stands for the kubeconfig flag --server, which names one server.
	fs.StringSliceVar(&f.servers, "server", nil, "The hub's API servers, repeated or comma-separated (default: the server of the kubeconfig in use)")
	fs.StringSliceVar(&f.etcd.endpoints, "etcd-endpoint", nil, "A client URL of a member of the hub's etcd, repeated or comma-separated; the other members are found from its member list")
	fs.StringVar(&f.etcd.caFile, "etcd-cacert", "", "The CA file that verifies the etcd members' serving certificates")
	fs.StringVar(&f.etcd.cert, "etcd-cert", "", "The client certificate file for etcd")
	fs.StringVar(&f.etcd.keyFile, "etcd-key", "", "The client key file for etcd")
	fs.StringVar(&f.leaderNamespace, "leader-election-namespace", controllerLease.Namespace, "The namespace of the controller's leader election Lease, as the controller's flag of that name")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Second, "How long each check waits for an answer")
	fs.StringVarP(&f.output, "output", "o", "", "Output format: a table per part by default, or one of json, yaml")
	return cmd
}

// hubStatus is what the command found, and -o json and yaml print.
type hubStatus struct {
	// Etcd is nil when no --etcd-endpoint was given.
	Etcd       *etcdReport       `json:"etcd,omitempty"`
	APIServers []apiServerReport `json:"apiServers"`
	Controller controllerReport  `json:"controller"`
	// Problems are why the hub is not safe to rely on; empty when it is.
	Problems []string `json:"problems,omitempty"`
}

// apiServerReport is one API server's readiness.
type apiServerReport struct {
	Server string `json:"server"`
	Ready  bool   `json:"ready"`
	// Latency is how long /readyz took to answer; empty when it did not.
	Latency string `json:"latency,omitempty"`
	// Failed are the checks of /readyz?verbose that failed.
	Failed []string `json:"failed,omitempty"`
	Reason string   `json:"reason,omitempty"`

	config *rest.Config
}

// controllerReport is the controller's leader election.
type controllerReport struct {
	Lease       string       `json:"lease"`
	Leading     bool         `json:"leading"`
	Holder      string       `json:"holder,omitempty"`
	RenewTime   *metav1.Time `json:"renewTime,omitempty"`
	Duration    int32        `json:"leaseDurationSeconds,omitempty"`
	Transitions int32        `json:"leaseTransitions,omitempty"`
	// Reason says why no replica leads.
	Reason string `json:"reason,omitempty"`
}

func (o *options) hubStatus(ctx context.Context, f *hubStatusFlags) error {
	if f.output != "" && f.output != "json" && f.output != "yaml" {
		return fmt.Errorf("unknown output format %q: use json or yaml, or leave -o out for tables", f.output)
	}
	if f.timeout <= 0 {
		return errors.New("--timeout must be positive")
	}
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	servers := f.servers
	if len(servers) == 0 {
		servers = []string{cfg.Host}
	}
	var gateway *etcdGateway
	if len(f.etcd.endpoints) > 0 {
		if gateway, err = newEtcdGateway(f.etcd, f.timeout); err != nil {
			return err
		}
	}

	status := &hubStatus{}
	var wg sync.WaitGroup
	if gateway != nil {
		wg.Go(func() {
			probes := gateway.probeAll(ctx, f.etcd.endpoints)
			probes = append(probes, gateway.probeAll(ctx, unasked(probes))...)
			r := judgeEtcd(probes)
			status.Etcd = &r
		})
	}
	status.APIServers = make([]apiServerReport, len(servers))
	for i, s := range servers {
		wg.Go(func() { status.APIServers[i] = probeAPIServer(ctx, cfg, s, f.timeout) })
	}
	wg.Wait()

	lease := client.ObjectKey{Namespace: f.leaderNamespace, Name: controllerLease.Name}
	status.Controller = o.readLease(ctx, status.APIServers, lease, f.timeout)
	status.Problems = problems(status)

	if err := printHubStatus(o.streams.Out, f.output, status, time.Now()); err != nil {
		return err
	}
	if len(status.Problems) > 0 {
		return fmt.Errorf("the hub is not safe to rely on: %s", strings.Join(status.Problems, "; "))
	}
	return nil
}

// probeAPIServer asks server its /readyz?verbose with the credentials of base.
func probeAPIServer(ctx context.Context, base *rest.Config, server string, timeout time.Duration) apiServerReport {
	r := apiServerReport{Server: server}
	if !strings.Contains(server, "://") {
		server = "https://" + server
	}
	cfg := rest.CopyConfig(base)
	cfg.Host = server
	cfg.Timeout = timeout
	r.config = cfg
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(server, "/")+"/readyz?verbose", nil)
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		r.Reason = unwrapURLError(err, timeout)
		return r
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		r.Reason = unwrapURLError(err, timeout)
		return r
	}
	r.Latency = time.Since(start).Round(time.Millisecond).String()
	r.Ready, r.Failed, r.Reason = judgeReadyz(resp.StatusCode, resp.Status, string(body))
	return r
}

// unwrapURLError is a failed request's reason without the method and URL, which the table
// shows already.
func unwrapURLError(err error, timeout time.Duration) string {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		if uerr.Timeout() {
			return fmt.Sprintf("no answer in %s", timeout)
		}
		return uerr.Err.Error()
	}
	return err.Error()
}

// judgeReadyz reads an answer of /readyz?verbose: ready on 200, else the checks it marks
// [-] (as "[-]etcd failed: reason withheld"), or the status and what it said.
func judgeReadyz(code int, status, body string) (ready bool, failed []string, reason string) {
	if code == http.StatusOK {
		return true, nil, ""
	}
	for l := range strings.Lines(body) {
		if check, ok := strings.CutPrefix(strings.TrimSpace(l), "[-]"); ok {
			name, _, _ := strings.Cut(check, " ")
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return false, failed, "failed checks: " + strings.Join(failed, ",")
	}
	if len(body) > 200 {
		body = body[:200]
	}
	if msg := strings.Join(strings.Fields(body), " "); msg != "" {
		return false, nil, status + ": " + msg
	}
	return false, nil, status
}

// readLease reads the controller's Lease through the first ready API server.
func (o *options) readLease(ctx context.Context, servers []apiServerReport, key client.ObjectKey, timeout time.Duration) controllerReport {
	r := controllerReport{Lease: key.String()}
	for _, s := range servers {
		if !s.Ready {
			continue
		}
		c, err := client.New(s.config, client.Options{Scheme: scheme, Mapper: restMapper()})
		if err != nil {
			r.Reason = fmt.Sprintf("not read: %v", err)
			return r
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		lease := &coordinationv1.Lease{}
		if err := c.Get(ctx, key, lease); client.IgnoreNotFound(err) != nil {
			r.Reason = fmt.Sprintf("not read from %s: %s", s.Server, o.explain(err))
			return r
		} else if err != nil {
			lease = nil
		}
		return judgeLease(r, lease, time.Now())
	}
	r.Reason = "not read: no API server is ready"
	return r
}

// judgeLease fills r from the controller's leader election Lease, nil when there is none: a
// replica leads while the Lease's holder renews it within its duration.
func judgeLease(r controllerReport, lease *coordinationv1.Lease, now time.Time) controllerReport {
	if lease == nil {
		r.Reason = "no Lease: no replica was ever elected (is the controller running with --leader-elect?)"
		return r
	}
	r.Holder = ptr.Deref(lease.Spec.HolderIdentity, "")
	if t := lease.Spec.RenewTime; t != nil {
		r.RenewTime = &metav1.Time{Time: t.Time}
	}
	r.Duration = ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)
	r.Transitions = ptr.Deref(lease.Spec.LeaseTransitions, 0)
	r.Leading = leaseHeld(lease, now)
	switch {
	case r.Leading:
	case r.Holder == "":
		r.Reason = "released: the last leader gave it up and no replica took it"
	case r.RenewTime == nil || r.Duration == 0:
		r.Reason = "never renewed"
	default:
		r.Reason = fmt.Sprintf("expired: %s did not renew it for %s, longer than its %ds", r.Holder, duration.HumanDuration(now.Sub(r.RenewTime.Time)), r.Duration)
	}
	return r
}

// problems are the reasons the hub is not safe to rely on.
func problems(s *hubStatus) []string {
	var p []string
	if e := s.Etcd; e != nil && !e.Quorum {
		p = append(p, "etcd has no quorum ("+e.Reason+")")
	}
	ready := 0
	for _, a := range s.APIServers {
		if a.Ready {
			ready++
		}
	}
	if ready == 0 {
		p = append(p, "no API server is ready")
	}
	switch c := s.Controller; {
	case c.Leading:
	case c.Holder == "" && c.RenewTime == nil && strings.HasPrefix(c.Reason, "not read"):
		p = append(p, "no controller replica is known to lead (the Lease was "+c.Reason+")")
	default:
		p = append(p, "no controller replica leads ("+c.Reason+")")
	}
	return p
}

// printHubStatus prints the status as json, yaml, or for "" a table per part with a line
// above each that sums it up.
func printHubStatus(w io.Writer, format string, s *hubStatus, now time.Time) error {
	switch format {
	case "json":
		data, err := json.MarshalIndent(s, "", "    ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	case "yaml":
		data, err := yaml.Marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	table := printers.NewTablePrinter(printers.PrintOptions{})
	var parts []func() error
	parts = append(parts, func() error {
		e := s.Etcd
		if e == nil {
			_, err := fmt.Fprintln(w, "etcd: not checked (name its members' client URLs with --etcd-endpoint)")
			return err
		}
		quorum := "quorum"
		if !e.Quorum {
			quorum = "NO QUORUM"
		}
		leader := "no leader"
		if e.Leader != "" {
			leader = "leader " + e.Leader
		}
		fmt.Fprintf(w, "etcd: %s, %d of %d voting members healthy (%d needed), %s\n", quorum, e.Healthy, e.Voters, e.needed(), leader)
		return table.PrintObj(etcdTable(e), w)
	}, func() error {
		ready := 0
		for _, a := range s.APIServers {
			if a.Ready {
				ready++
			}
		}
		fmt.Fprintf(w, "API servers: %d of %d ready\n", ready, len(s.APIServers))
		return table.PrintObj(apiServerTable(s.APIServers), w)
	}, func() error {
		c := s.Controller
		if c.Leading {
			fmt.Fprintf(w, "controller: %s leads (Lease %s)\n", c.Holder, c.Lease)
		} else {
			fmt.Fprintf(w, "controller: NO LEADER (Lease %s)\n", c.Lease)
		}
		return table.PrintObj(controllerTable(c, now), w)
	})
	for i, part := range parts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := part(); err != nil {
			return err
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

var etcdColumns = columns([]string{"Name", "ID", "Client URLs", "Healthy", "Leader", "Version", "DB Size", "Raft Term", "Reason"})

func etcdTable(e *etcdReport) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: etcdColumns}
	for _, m := range e.Members {
		urls := m.ClientURLs
		if len(urls) == 0 && m.Endpoint != "" {
			urls = []string{m.Endpoint}
		}
		healthy := yesNo(m.Healthy)
		if m.Learner {
			healthy += " (learner)"
		}
		version, size, term := "", "", ""
		if m.Version != "" {
			version, size, term = m.Version, byteSize(m.DBSize), fmt.Sprint(m.RaftTerm)
		}
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{
			m.Name, orNone(m.ID), joined(urls), healthy, yesNo(m.Leader), orNone(version), orNone(size), orNone(term), orNone(m.Reason),
		}})
	}
	return t
}

var apiServerColumns = columns([]string{"Server", "Ready", "Latency", "Reason"})

func apiServerTable(servers []apiServerReport) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: apiServerColumns}
	for _, a := range servers {
		t.Rows = append(t.Rows, metav1.TableRow{Cells: []any{a.Server, yesNo(a.Ready), orNone(a.Latency), orNone(a.Reason)}})
	}
	return t
}

var controllerColumns = columns([]string{"Holder", "Leading", "Renewed", "Lease Duration", "Transitions", "Reason"})

func controllerTable(c controllerReport, now time.Time) *metav1.Table {
	renewed := "<none>"
	if c.RenewTime != nil {
		renewed = age(c.RenewTime, now) + " ago"
	}
	leaseDuration := "<none>"
	if c.Duration > 0 {
		leaseDuration = fmt.Sprintf("%ds", c.Duration)
	}
	return &metav1.Table{ColumnDefinitions: controllerColumns, Rows: []metav1.TableRow{{Cells: []any{
		orNone(c.Holder), yesNo(c.Leading), renewed, leaseDuration, fmt.Sprint(c.Transitions), orNone(c.Reason),
	}}}}
}

// byteSize writes n bytes as etcdctl does, in powers of 1000.
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.0f %cB", float64(n)/float64(div), "kMGTPE"[exp])
}
