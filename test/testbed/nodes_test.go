package testbed

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestMembersRunPods checks what a member's nodes do: its nodes register in its node CIDR and
// become Ready and untainted; a pod with a claim of the storage domain's class (Immediate) is
// scheduled once the claim is Bound, runs and is Ready; a pod with a claim of a class that
// waits for the first consumer is scheduled first, and the volume is provisioned for the node
// the scheduler chose; and a deleted pod goes, as its kubelet would let it, so that the
// member's pvc-protection lets its claim go.
func TestMembersRunPods(t *testing.T) {
	ctx, bed := startTwoMembers(t, 3*time.Minute)
	m1 := bed.Member("m1")

	nodes := &corev1.NodeList{}
	poll(ctx, t, "m1's nodes Ready and untainted", func() (bool, error) {
		err := m1.Client.List(ctx, nodes)
		return err == nil && len(nodes.Items) == DefaultNodes && allSchedulable(nodes.Items), err
	})
	for i, n := range nodes.Items {
		if n.Name != NodeName("m1", i) || n.Annotations[KwokNodeAnnotation] != "fake" ||
			len(n.Status.Addresses) == 0 || n.Status.Addresses[0].Address != fmt.Sprintf("10.1.0.%d", i+1) {
			t.Errorf("node %d: %s, annotations %v, addresses %v", i, n.Name, n.Annotations, n.Status.Addresses)
		}
	}

	provisioner := bed.Storage("shared").Provisioner()
	wffc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: "shared-wffc"},
		Provisioner:       provisioner,
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pods"}}
	for _, o := range []client.Object{wffc, ns} {
		if err := m1.Client.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, class := range []string{"shared", wffc.Name} {
		claim, pod := podWithClaim(ns.Name, class)
		for _, o := range []client.Object{claim, pod} {
			if err := m1.Client.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		poll(ctx, t, "pod "+pod.Name+" Running and Ready", func() (bool, error) {
			err := m1.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
			return err == nil && pod.Status.Phase == corev1.PodRunning && podReady(pod), err
		})
		if err := m1.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim); err != nil {
			t.Fatal(err)
		}
		if claim.Status.Phase != corev1.ClaimBound {
			t.Errorf("claim %s of a running pod: %s", claim.Name, claim.Status.Phase)
		}
		if class == wffc.Name && claim.Annotations["volume.kubernetes.io/selected-node"] != pod.Spec.NodeName {
			t.Errorf("claim %s: selected node %q, the pod runs on %q", claim.Name, claim.Annotations["volume.kubernetes.io/selected-node"], pod.Spec.NodeName)
		}

		if err := m1.Client.Delete(ctx, claim); err != nil {
			t.Fatal(err)
		}
		if err := m1.Client.Delete(ctx, pod); err != nil {
			t.Fatal(err)
		}
		poll(ctx, t, "pod "+pod.Name+" and claim "+claim.Name+" gone", func() (bool, error) {
			errPod := m1.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
			errClaim := m1.Client.Get(ctx, client.ObjectKeyFromObject(claim), claim)
			if err := errors.Join(client.IgnoreNotFound(errPod), client.IgnoreNotFound(errClaim)); err != nil {
				return false, err
			}
			return apierrors.IsNotFound(errPod) && apierrors.IsNotFound(errClaim), nil
		})
	}
}

// startTwoMembers starts a bed of two members for a test that may take timeout, and stops it
// when the test ends.
func startTwoMembers(t *testing.T, timeout time.Duration) (context.Context, *Bed) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	bed, err := Start(ctx, TwoMembers())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bed.Stop() })
	return ctx, bed
}

// podWithClaim is a pod, named after the class, that uses a claim of it.
func podWithClaim(ns, class string) (*corev1.PersistentVolumeClaim, *corev1.Pod) {
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-" + class},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(class),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app-" + class},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "app"}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim.Name},
			}}},
		},
	}
	return claim, pod
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// poll waits a minute at most for done.
func poll(ctx context.Context, t *testing.T, what string, done func() (bool, error)) {
	t.Helper()
	pollWithin(ctx, t, time.Minute, what, done)
}

// pollWithin waits bound at most for done.
func pollWithin(ctx context.Context, t *testing.T, bound time.Duration, what string, done func() (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, bound, true, func(context.Context) (bool, error) {
		return done()
	}); err != nil {
		t.Fatalf("waiting %s for %s: %v", bound, what, err)
	}
}

// TestMembersRunPodsAcrossOutages checks that a member's nodes catch up at once after each
// outage of its API server, a short one and one long enough to restart its controller
// manager: a pod made just before the outage and one made just after it run, and go once
// deleted, within playBound of the API server's return. kwok running on through the outages
// took up to 90 s; one started afresh beside the old one's Leases, about 40 s.
func TestMembersRunPodsAcrossOutages(t *testing.T) {
	const playBound = 15 * time.Second
	ctx, bed := startTwoMembers(t, 4*time.Minute)
	m1 := bed.Member("m1")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "outages"}}
	if err := m1.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	for i, outage := range []time.Duration{2 * time.Second, kcmRenewDeadline + time.Second, 3 * time.Second} {
		before := plainPod(ns.Name, fmt.Sprintf("before-%d", i))
		if err := m1.Client.Create(ctx, before); err != nil {
			t.Fatal(err)
		}
		if err := m1.StopAPIServer(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(outage)
		if err := m1.StartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		back := time.Now()
		after := plainPod(ns.Name, fmt.Sprintf("after-%d", i))
		if err := m1.Client.Create(ctx, after); err != nil {
			t.Fatal(err)
		}
		for _, pod := range []*corev1.Pod{before, after} {
			pollWithin(ctx, t, playBound, fmt.Sprintf("pod %s Running after an outage of %s", pod.Name, outage), func() (bool, error) {
				err := m1.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
				return err == nil && pod.Status.Phase == corev1.PodRunning, err
			})
			if err := m1.Client.Delete(ctx, pod); err != nil {
				t.Fatal(err)
			}
		}
		for _, pod := range []*corev1.Pod{before, after} {
			pollWithin(ctx, t, playBound, fmt.Sprintf("pod %s gone after an outage of %s", pod.Name, outage), func() (bool, error) {
				err := m1.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod)
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
		}
		t.Logf("outage of %s: both pods ran and went %s after the API server's return", outage, time.Since(back).Round(time.Millisecond))
	}
}

// plainPod is a pod without volumes.
func plainPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
	}
}
