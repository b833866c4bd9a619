package app

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Answers of etcd 3.7.3's gateway, as bin/etcd gave them for a cluster of e1, e2 and e3
// whose leader is e2, then with e1 and e2 stopped.
const (
	memberListJSON = `{"header":{"cluster_id":"7098333957187635323","member_id":"8439526027888870300","raft_term":"2"},"members":[` +
		`{"ID":"2895582614653634453","name":"e2","peerURLs":["http://127.0.0.1:24102"],"clientURLs":["http://127.0.0.1:24202"]},` +
		`{"ID":"3234242655596999696","name":"e3","peerURLs":["http://127.0.0.1:24103"],"clientURLs":["http://127.0.0.1:24203"]},` +
		`{"ID":"8439526027888870300","name":"e1","peerURLs":["http://127.0.0.1:24101"],"clientURLs":["http://127.0.0.1:24201"]}]}`
	statusE1JSON = `{"header":{"cluster_id":"7098333957187635323","member_id":"8439526027888870300","revision":"1","raft_term":"2"},"version":"3.7.3","dbSize":"28672","leader":"2895582614653634453","raftIndex":"8","raftTerm":"2","raftAppliedIndex":"8","dbSizeInUse":"24576","storageVersion":"3.7.0","dbSizeQuota":"2147483648","downgradeInfo":{}}`
	statusE2JSON = `{"header":{"cluster_id":"7098333957187635323","member_id":"2895582614653634453","revision":"1","raft_term":"2"},"version":"3.7.3","dbSize":"28672","leader":"2895582614653634453","raftIndex":"8","raftTerm":"2","raftAppliedIndex":"8","dbSizeInUse":"24576","storageVersion":"3.7.0","dbSizeQuota":"2147483648","downgradeInfo":{}}`
	statusE3JSON = `{"header":{"cluster_id":"7098333957187635323","member_id":"3234242655596999696","revision":"1","raft_term":"2"},"version":"3.7.3","dbSize":"28672","leader":"2895582614653634453","raftIndex":"8","raftTerm":"2","raftAppliedIndex":"8","dbSizeInUse":"24576","storageVersion":"3.7.0","dbSizeQuota":"2147483648","downgradeInfo":{}}`
	// e3 alone: no "leader", and why in "errors".
	statusE3AloneJSON = `{"header":{"cluster_id":"7098333957187635323","member_id":"3234242655596999696","revision":"1","raft_term":"3"},"version":"3.7.3","dbSize":"28672","raftIndex":"9","raftTerm":"3","raftAppliedIndex":"9","errors":["etcdserver: no leader"],"dbSizeInUse":"24576","storageVersion":"3.7.0","dbSizeQuota":"2147483648","downgradeInfo":{}}`
	healthyJSON       = `{"health":"true","reason":""}`
	noLeaderJSON      = `{"health":"false","reason":"RAFT NO LEADER"}`
)

func decoded[T any](t *testing.T, data string) *T {
	t.Helper()
	v := new(T)
	if err := json.Unmarshal([]byte(data), v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestHubStatusJudgeEtcd(t *testing.T) {
	refused := errors.New("dial tcp 127.0.0.1:24201: connect: connection refused")
	healthy := func(endpoint, status string) etcdProbe {
		return etcdProbe{Endpoint: endpoint, Health: decoded[etcdHealth](t, healthyJSON), Status: decoded[etcdStatus](t, status), Members: decoded[etcdMemberList](t, memberListJSON)}
	}
	down := func(endpoint string) etcdProbe {
		return etcdProbe{Endpoint: endpoint, HealthErr: refused, StatusErr: refused, MembersErr: refused}
	}
	e1, e2, e3 := "http://127.0.0.1:24201", "http://127.0.0.1:24202", "http://127.0.0.1:24203/"
	alone := etcdProbe{Endpoint: e3, Health: decoded[etcdHealth](t, noLeaderJSON), Status: decoded[etcdStatus](t, statusE3AloneJSON), Members: decoded[etcdMemberList](t, memberListJSON)}
	// /health timed out, the status answered.
	aloneSlow := alone
	aloneSlow.Health, aloneSlow.HealthErr = nil, errors.New("no answer in 5s")
	learners := decoded[etcdMemberList](t, memberListJSON)
	learners.Members[1].IsLearner = true
	for _, tc := range []struct {
		name   string
		probes []etcdProbe
		// rows are name, healthy, leader and reason of each member.
		rows                    []string
		voters, healthy         int
		quorum                  bool
		leader, reason, nameIDs string
	}{
		{
			name:   "all healthy",
			probes: []etcdProbe{healthy(e1, statusE1JSON), healthy(e2, statusE2JSON), healthy(e3, statusE3JSON)},
			rows:   []string{"e2 true true ", "e3 true false ", "e1 true false "},
			voters: 3, healthy: 3, quorum: true, leader: "e2",
			nameIDs: "e2=282f2d0bec3a0795 e3=2ce2568f3c467410 e1=751f383534fac39c",
		},
		{
			name:   "one down",
			probes: []etcdProbe{down(e1), healthy(e2, statusE2JSON), healthy(e3, statusE3JSON)},
			rows:   []string{"e2 true true ", "e3 true false ", "e1 false false " + refused.Error()},
			voters: 3, healthy: 2, quorum: true, leader: "e2",
		},
		{
			name:   "two down",
			probes: []etcdProbe{down(e1), down(e2), alone},
			rows:   []string{"e2 false false " + refused.Error(), "e3 false false RAFT NO LEADER", "e1 false false " + refused.Error()},
			voters: 3, healthy: 0, quorum: false, reason: "0 of 3 voting members healthy, 2 needed",
		},
		{
			name:   "two down, the third slow to answer /health",
			probes: []etcdProbe{aloneSlow, down(e1), down(e2)},
			rows:   []string{"e2 false false " + refused.Error(), "e3 false false etcdserver: no leader", "e1 false false " + refused.Error()},
			voters: 3, healthy: 0, quorum: false, reason: "0 of 3 voting members healthy, 2 needed",
		},
		{
			name: "a learner does not count",
			probes: []etcdProbe{
				{Endpoint: e1, Health: decoded[etcdHealth](t, healthyJSON), Status: decoded[etcdStatus](t, statusE1JSON), Members: learners},
				down(e2), down(e3),
			},
			rows:   []string{"e2 false false " + refused.Error(), "e3 false false " + refused.Error(), "e1 true false "},
			voters: 2, healthy: 1, quorum: false, reason: "1 of 2 voting members healthy, 2 needed",
		},
		{
			name:   "an endpoint of no member",
			probes: []etcdProbe{healthy(e1, statusE1JSON), healthy(e2, statusE2JSON), healthy(e3, statusE3JSON), down("https://etcd.example:2379")},
			rows:   []string{"e2 true true ", "e3 true false ", "e1 true false ", "<unknown> false false " + refused.Error()},
			voters: 3, healthy: 3, quorum: true, leader: "e2",
		},
		{
			name:   "nobody answers",
			probes: []etcdProbe{down(e1)},
			rows:   []string{"<unknown> false false " + refused.Error()},
			reason: "no endpoint answered the member list",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := judgeEtcd(tc.probes)
			var rows, ids []string
			for _, m := range r.Members {
				rows = append(rows, strings.Join([]string{m.Name, yes(m.Healthy), yes(m.Leader), m.Reason}, " "))
				ids = append(ids, m.Name+"="+m.ID)
			}
			if !slices.Equal(rows, tc.rows) {
				t.Errorf("members:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(tc.rows, "\n"))
			}
			if tc.nameIDs != "" && strings.Join(ids, " ") != tc.nameIDs {
				t.Errorf("IDs %s, want %s", strings.Join(ids, " "), tc.nameIDs)
			}
			if r.Voters != tc.voters || r.Healthy != tc.healthy || r.Quorum != tc.quorum || r.Leader != tc.leader {
				t.Errorf("voters %d healthy %d quorum %t leader %q, want %d %d %t %q", r.Voters, r.Healthy, r.Quorum, r.Leader, tc.voters, tc.healthy, tc.quorum, tc.leader)
			}
			if tc.reason != "" && r.Reason != tc.reason {
				t.Errorf("reason %q, want %q", r.Reason, tc.reason)
			}
		})
	}
}

func yes(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestHubStatusUnasked(t *testing.T) {
	list := decoded[etcdMemberList](t, memberListJSON)
	// Asked at e1 only: e2 and e3 are asked at the URLs they advertise.
	asked := []etcdProbe{{Endpoint: "http://127.0.0.1:24201", Health: decoded[etcdHealth](t, healthyJSON), Status: decoded[etcdStatus](t, statusE1JSON), Members: list}}
	if got, want := unasked(asked), []string{"http://127.0.0.1:24202", "http://127.0.0.1:24203"}; !slices.Equal(got, want) {
		t.Errorf("unasked = %v, want %v", got, want)
	}
	// e1 asked at an address it does not advertise, down: it cannot be told apart, so it is
	// asked again at its own.
	refused := errors.New("connection refused")
	asked = append(asked, etcdProbe{Endpoint: "https://lb.example:2379", HealthErr: refused, StatusErr: refused, MembersErr: refused})
	if got := unasked(asked); len(got) != 2 {
		t.Errorf("unasked = %v, want e2 and e3", got)
	}
	// Nobody answered the list: nobody more to ask.
	if got := unasked(asked[1:]); got != nil {
		t.Errorf("unasked = %v, want none", got)
	}
}

func TestHubStatusJudgeReadyz(t *testing.T) {
	for _, tc := range []struct {
		code           int
		status, body   string
		ready          bool
		failed, reason string
	}{
		{200, "200 OK", "[+]ping ok\n[+]etcd ok\nreadyz check passed\n", true, "", ""},
		{500, "500 Internal Server Error", "[+]ping ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n[-]etcd-readiness failed: reason withheld\nreadyz check failed\n", false, "etcd,etcd-readiness", "failed checks: etcd,etcd-readiness"},
		{401, "401 Unauthorized", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","code":401}`, false, "", `401 Unauthorized: {"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","code":401}`},
		{503, "503 Service Unavailable", "", false, "", "503 Service Unavailable"},
	} {
		ready, failed, reason := judgeReadyz(tc.code, tc.status, tc.body)
		if ready != tc.ready || strings.Join(failed, ",") != tc.failed || reason != tc.reason {
			t.Errorf("%d %q: ready %t failed %v reason %q, want %t %q %q", tc.code, tc.body, ready, failed, reason, tc.ready, tc.failed, tc.reason)
		}
	}
}

func TestHubStatusJudgeLease(t *testing.T) {
	lease := func(holder string, renewed time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15), LeaseTransitions: ptr.To[int32](2),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)},
		}}
	}
	for _, tc := range []struct {
		name    string
		lease   *coordinationv1.Lease
		leading bool
		reason  string
	}{
		{"held", lease("replica-a_1", 3*time.Second), true, ""},
		{"expired", lease("replica-a_1", 3*time.Minute), false, "expired: replica-a_1 did not renew it for 3m, longer than its 15s"},
		{"released", lease("", time.Second), false, "released: the last leader gave it up and no replica took it"},
		{"missing", nil, false, "no Lease: no replica was ever elected (is the controller running with --leader-elect?)"},
	} {
		r := judgeLease(controllerReport{Lease: "custody-system/custody-controller"}, tc.lease, now)
		if r.Leading != tc.leading || r.Reason != tc.reason {
			t.Errorf("%s: leading %t reason %q, want %t %q", tc.name, r.Leading, r.Reason, tc.leading, tc.reason)
		}
	}
}

func TestHubStatusPrint(t *testing.T) {
	s := &hubStatus{
		Etcd: ptr.To(judgeEtcd([]etcdProbe{
			{Endpoint: "http://127.0.0.1:24201", Health: decoded[etcdHealth](t, healthyJSON), Status: decoded[etcdStatus](t, statusE1JSON), Members: decoded[etcdMemberList](t, memberListJSON)},
			{Endpoint: "http://127.0.0.1:24202", Health: decoded[etcdHealth](t, healthyJSON), Status: decoded[etcdStatus](t, statusE2JSON)},
			{Endpoint: "http://127.0.0.1:24203", HealthErr: errors.New("connection refused")},
		})),
		APIServers: []apiServerReport{
			{Server: "https://hub-a:6443", Ready: true, Latency: "12ms"},
			{Server: "https://hub-b:6443", Reason: "failed checks: etcd"},
		},
		Controller: judgeLease(controllerReport{Lease: "custody-system/custody-controller"}, &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("replica-a_1"), LeaseDurationSeconds: ptr.To[int32](15), LeaseTransitions: ptr.To[int32](1),
			RenewTime: &metav1.MicroTime{Time: now.Add(-2 * time.Second)},
		}}, now),
	}
	want := "" +
		"etcd: quorum, 2 of 3 voting members healthy (2 needed), leader e2\n" +
		"NAME   ID                 CLIENT URLS              HEALTHY   LEADER   VERSION   DB SIZE   RAFT TERM   REASON\n" +
		"e2     282f2d0bec3a0795   http://127.0.0.1:24202   yes       yes      3.7.3     29 kB     2           <none>\n" +
		"e3     2ce2568f3c467410   http://127.0.0.1:24203   no        no       <none>    <none>    <none>      connection refused\n" +
		"e1     751f383534fac39c   http://127.0.0.1:24201   yes       no       3.7.3     29 kB     2           <none>\n" +
		"\n" +
		"API servers: 1 of 2 ready\n" +
		"SERVER               READY   LATENCY   REASON\n" +
		"https://hub-a:6443   yes     12ms      <none>\n" +
		"https://hub-b:6443   no      <none>    failed checks: etcd\n" +
		"\n" +
		"controller: replica-a_1 leads (Lease custody-system/custody-controller)\n" +
		"HOLDER        LEADING   RENEWED   LEASE DURATION   TRANSITIONS   REASON\n" +
		"replica-a_1   yes       2s ago    15s              1             <none>\n"
	var out bytes.Buffer
	if err := printHubStatus(&out, "", s, now); err != nil {
		t.Fatal(err)
	}
	if out.String() != want {
		t.Errorf("printed:\n%s\nwant:\n%s", out.String(), want)
	}
	if got := problems(s); got != nil {
		t.Errorf("problems %v, want none", got)
	}
	s.Etcd = nil
	s.APIServers[0].Ready = false
	s.Controller = judgeLease(controllerReport{}, nil, now)
	if got, want := problems(s), []string{"no API server is ready", "no controller replica leads (no Lease: no replica was ever elected (is the controller running with --leader-elect?))"}; !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
}

// TestHubStatusEtcdGateway asks a TLS server that answers as an etcd member's gateway does,
// trusted through --etcd-cacert, and one that refuses.
func TestHubStatusEtcdGateway(t *testing.T) {
	var methods []string
	var mu sync.Mutex
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		methods = append(methods, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/health":
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, noLeaderJSON)
		case "/v3/maintenance/status":
			fmt.Fprint(w, statusE3AloneJSON)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"code":5,"message":"Not Found"}`)
		}
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	gw, err := newEtcdGateway(etcdFlags{caFile: ca}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p := gw.probe(t.Context(), srv.URL+"/")
	if p.Health == nil || p.Health.Reason != "RAFT NO LEADER" || p.Status == nil || p.Status.Leader != "" || p.Status.RaftTerm != "3" {
		t.Errorf("probe read health %+v (%v), status %+v (%v)", p.Health, p.HealthErr, p.Status, p.StatusErr)
	}
	if p.Members != nil || p.MembersErr == nil || p.MembersErr.Error() != "404 Not Found: Not Found" {
		t.Errorf("member list %+v, error %v: want the gateway's message", p.Members, p.MembersErr)
	}
	slices.Sort(methods)
	if want := []string{"GET /health", "POST /v3/cluster/member/list", "POST /v3/maintenance/status"}; !slices.Equal(methods, want) {
		t.Errorf("requests %v, want %v", methods, want)
	}

	// Without the CA the member's certificate is not trusted.
	gw, err = newEtcdGateway(etcdFlags{}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p := gw.probe(t.Context(), srv.URL); p.HealthErr == nil || !strings.Contains(p.HealthErr.Error(), "certificate") {
		t.Errorf("health error %v, want an untrusted certificate", p.HealthErr)
	}
	if _, err := newEtcdGateway(etcdFlags{cert: "client.crt"}, time.Second); err == nil || err.Error() != "--etcd-cert and --etcd-key go together" {
		t.Errorf("a certificate without its key: %v", err)
	}
}
