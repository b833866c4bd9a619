package app

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The hub's etcd is read through its gRPC gateway, the JSON over HTTP(S) that every etcd
// member serves on its client URLs, rather than with the etcd client library: three requests
// per member need no heavy dependency. The gateway writes uint64 fields as strings and
// leaves out fields at their zero value (a member with no leader has no "leader").

// etcdHealth is the answer of GET /health: {"health":"true","reason":""}, or
// {"health":"false","reason":"RAFT NO LEADER"} with status 503.
type etcdHealth struct {
	Health string `json:"health"`
	Reason string `json:"reason"`
}

// etcdHeader is the header of every gateway answer: the cluster and the member that answered.
type etcdHeader struct {
	ClusterID string `json:"cluster_id"`
	MemberID  string `json:"member_id"`
	RaftTerm  string `json:"raft_term"`
}

// etcdStatus is the answer of POST /v3/maintenance/status: the answering member's view.
// Leader is absent, and Errors says "etcdserver: no leader", when it knows of no leader.
type etcdStatus struct {
	Header    etcdHeader `json:"header"`
	Version   string     `json:"version"`
	DBSize    string     `json:"dbSize"`
	Leader    string     `json:"leader"`
	RaftIndex string     `json:"raftIndex"`
	RaftTerm  string     `json:"raftTerm"`
	Errors    []string   `json:"errors"`
	IsLearner bool       `json:"isLearner"`
}

// etcdMemberList is the answer of POST /v3/cluster/member/list. A member added but not yet
// started has no name and no client URLs.
type etcdMemberList struct {
	Header  etcdHeader `json:"header"`
	Members []struct {
		ID         string   `json:"ID"`
		Name       string   `json:"name"`
		PeerURLs   []string `json:"peerURLs"`
		ClientURLs []string `json:"clientURLs"`
		IsLearner  bool     `json:"isLearner"`
	} `json:"members"`
}

// etcdProbe is what one etcd endpoint answered, each request's answer or error.
type etcdProbe struct {
	Endpoint   string
	Health     *etcdHealth
	HealthErr  error
	Status     *etcdStatus
	StatusErr  error
	Members    *etcdMemberList
	MembersErr error
}

// etcdFlags are the flags that reach the hub's etcd.
type etcdFlags struct {
	endpoints             []string
	caFile, cert, keyFile string
}

// etcdGateway asks etcd members over their JSON gateway.
type etcdGateway struct {
	client  *http.Client
	timeout time.Duration
}

func newEtcdGateway(f etcdFlags, timeout time.Duration) (*etcdGateway, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.caFile != "" {
		pem, err := os.ReadFile(f.caFile)
		if err != nil {
			return nil, fmt.Errorf("reading --etcd-cacert: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--etcd-cacert %s holds no PEM certificate", f.caFile)
		}
		tlsConfig.RootCAs = pool
	}
	if (f.cert == "") != (f.keyFile == "") {
		return nil, errors.New("--etcd-cert and --etcd-key go together")
	}
	if f.cert != "" {
		pair, err := tls.LoadX509KeyPair(f.cert, f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("loading --etcd-cert and --etcd-key: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{pair}
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsConfig
	transport.Proxy = nil
	return &etcdGateway{client: &http.Client{Transport: transport}, timeout: timeout}, nil
}

// probeAll asks every endpoint at once.
func (g *etcdGateway) probeAll(ctx context.Context, endpoints []string) []etcdProbe {
	probes := make([]etcdProbe, len(endpoints))
	var wg sync.WaitGroup
	for i, e := range endpoints {
		wg.Go(func() { probes[i] = g.probe(ctx, e) })
	}
	wg.Wait()
	return probes
}

// probe asks one endpoint its health, status and member list at once: a member without
// quorum may take seconds to answer /health, and answers the others at once.
func (g *etcdGateway) probe(ctx context.Context, endpoint string) etcdProbe {
	p := etcdProbe{Endpoint: endpoint}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		p.Health = &etcdHealth{}
		// /health answers 503 with a body that says why.
		if p.HealthErr = g.call(ctx, http.MethodGet, endpoint, "/health", p.Health, http.StatusServiceUnavailable); p.HealthErr != nil {
			p.Health = nil
		}
	})
	wg.Go(func() {
		p.Status = &etcdStatus{}
		if p.StatusErr = g.call(ctx, http.MethodPost, endpoint, "/v3/maintenance/status", p.Status); p.StatusErr != nil {
			p.Status = nil
		}
	})
	wg.Go(func() {
		p.Members = &etcdMemberList{}
		if p.MembersErr = g.call(ctx, http.MethodPost, endpoint, "/v3/cluster/member/list", p.Members); p.MembersErr != nil {
			p.Members = nil
		}
	})
	wg.Wait()
	return p
}

// call sends a request with the body {} (for POST) and decodes the JSON answer into out.
// Statuses other than 200 and also are errors, with the gateway's message when it has one.
func (g *etcdGateway) call(ctx context.Context, method, endpoint, path string, out any, also ...int) error {
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader("{}")
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(endpoint, "/")+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer in %s", g.timeout)
		}
		var uerr *url.Error
		if errors.As(err, &uerr) {
			return uerr.Err
		}
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK && !slices.Contains(also, resp.StatusCode) {
		var gwErr struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &gwErr) == nil && gwErr.Message != "" {
			return fmt.Errorf("%s: %s", resp.Status, gwErr.Message)
		}
		return errors.New(resp.Status)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s answered %s, not etcd's JSON: %w", path, bytes.TrimSpace(data[:min(len(data), 80)]), err)
	}
	return nil
}

// etcdMemberReport is one etcd member as the status shows it.
type etcdMemberReport struct {
	Name string `json:"name"`
	// ID is the member's ID in hex, as etcdctl and etcd's logs write it.
	ID         string   `json:"id"`
	ClientURLs []string `json:"clientURLs"`
	// Endpoint is the URL it was asked at.
	Endpoint string `json:"endpoint,omitempty"`
	Learner  bool   `json:"learner,omitempty"`
	Healthy  bool   `json:"healthy"`
	Leader   bool   `json:"leader,omitempty"`
	Version  string `json:"version,omitempty"`
	DBSize   int64  `json:"dbSize,omitempty"`
	RaftTerm uint64 `json:"raftTerm,omitempty"`
	// Reason says why it is not healthy.
	Reason string `json:"reason,omitempty"`
}

// etcdReport is the judgement of the hub's etcd.
type etcdReport struct {
	Members []etcdMemberReport `json:"members"`
	// Voters are the members that count for quorum (all but learners), Healthy those of them
	// that are healthy.
	Voters  int  `json:"voters"`
	Healthy int  `json:"healthy"`
	Quorum  bool `json:"quorum"`
	// Leader names the raft leader that the healthy members agree on; empty when none.
	Leader string `json:"leader,omitempty"`
	// Reason says why there is no quorum or no leader.
	Reason string `json:"reason,omitempty"`
}

// needed is how many healthy voters make a quorum.
func (r *etcdReport) needed() int { return r.Voters/2 + 1 }

// memberList is the member list a healthy member answered, else any answered; nil when none.
func memberList(probes []etcdProbe) *etcdMemberList {
	var any *etcdMemberList
	for _, p := range probes {
		if p.Members == nil {
			continue
		}
		if p.Health != nil && p.Health.Health == "true" {
			return p.Members
		}
		if any == nil {
			any = p.Members
		}
	}
	return any
}

// unasked are the advertised client URLs of the members that no probe reached, one per
// member, for a second round: one --etcd-endpoint shows every member, as etcdctl --cluster.
func unasked(probes []etcdProbe) []string {
	list := memberList(probes)
	if list == nil {
		return nil
	}
	var urls []string
	for _, m := range list.Members {
		if len(m.ClientURLs) > 0 && probeOf(probes, m.ID, m.ClientURLs) < 0 {
			urls = append(urls, m.ClientURLs[0])
		}
	}
	return urls
}

// probeOf is the index of the probe of the member with id and clientURLs: the one the member
// answered itself, else one asked at one of its URLs; -1 when none.
func probeOf(probes []etcdProbe, id string, clientURLs []string) int {
	for i, p := range probes {
		if p.Status != nil && p.Status.Header.MemberID == id {
			return i
		}
	}
	for i, p := range probes {
		if p.Status == nil && slices.ContainsFunc(clientURLs, func(u string) bool { return sameURL(u, p.Endpoint) }) {
			return i
		}
	}
	return -1
}

func sameURL(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}

// judgeEtcd reports each member of the cluster from what the probes answered: healthy when
// its /health says true, the leader being the healthy member that the healthy members name.
// The cluster has quorum when a majority of its voting members is healthy. An endpoint that
// answered nothing and is no member's client URL is reported as a member of no known name.
func judgeEtcd(probes []etcdProbe) etcdReport {
	r := etcdReport{}
	list := memberList(probes)
	if list == nil {
		r.Reason = "no endpoint answered the member list"
		for _, p := range probes {
			r.Members = append(r.Members, memberReport(p, "<unknown>", ""))
		}
		return r
	}
	leaders := map[string]bool{}
	used := make([]bool, len(probes))
	for _, m := range list.Members {
		var mr etcdMemberReport
		if i := probeOf(probes, m.ID, m.ClientURLs); i >= 0 {
			used[i] = true
			mr = memberReport(probes[i], m.Name, m.ID)
			if s := probes[i].Status; mr.Healthy && s != nil && s.Leader != "" {
				leaders[s.Leader] = true
			}
		} else {
			mr = etcdMemberReport{Name: m.Name, ID: hexID(m.ID), Reason: "not asked: it advertises no client URL"}
		}
		mr.ClientURLs = m.ClientURLs
		mr.Learner = m.IsLearner
		if mr.Name == "" {
			mr.Name = "<unstarted>"
		}
		if !m.IsLearner {
			r.Voters++
			if mr.Healthy {
				r.Healthy++
			}
		}
		r.Members = append(r.Members, mr)
	}
	for i, p := range probes {
		if !used[i] {
			r.Members = append(r.Members, memberReport(p, "<unknown>", ""))
		}
	}
	r.Quorum = r.Voters > 0 && r.Healthy >= r.needed()
	switch {
	case len(leaders) == 1:
		// A leader that is not healthy itself is one the others have not yet seen go.
		for i, m := range list.Members {
			if leaders[m.ID] && r.Members[i].Healthy {
				r.Members[i].Leader = true
				r.Leader = r.Members[i].Name
			} else if leaders[m.ID] {
				r.Reason = fmt.Sprintf("the healthy members name %s the leader, which is not healthy", r.Members[i].Name)
			}
		}
	case len(leaders) > 1:
		r.Reason = "the healthy members name different leaders"
	default:
		r.Reason = "no healthy member knows a leader"
	}
	if !r.Quorum {
		r.Reason = fmt.Sprintf("%d of %d voting members healthy, %d needed", r.Healthy, r.Voters, r.needed())
	}
	return r
}

// memberReport is what one probe says of its member, named name with the gateway's id.
func memberReport(p etcdProbe, name, id string) etcdMemberReport {
	mr := etcdMemberReport{Name: name, ID: hexID(id), Endpoint: p.Endpoint}
	if s := p.Status; s != nil {
		mr.Version = s.Version
		mr.DBSize, _ = strconv.ParseInt(s.DBSize, 10, 64)
		mr.RaftTerm, _ = strconv.ParseUint(s.RaftTerm, 10, 64)
		if mr.ID == "" {
			mr.ID = hexID(s.Header.MemberID)
		}
	}
	switch {
	case p.Health != nil && p.Health.Health == "true":
		mr.Healthy = true
	case p.Health != nil:
		mr.Reason = orNone(p.Health.Reason)
	case p.Status != nil && len(p.Status.Errors) > 0:
		// /health timed out; the status says why.
		mr.Reason = strings.Join(p.Status.Errors, "; ")
	case p.HealthErr != nil:
		mr.Reason = p.HealthErr.Error()
	}
	return mr
}

// hexID writes the gateway's decimal member ID in hex, as etcdctl and etcd's logs do.
func hexID(id string) string {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return id
	}
	return strconv.FormatUint(n, 16)
}
