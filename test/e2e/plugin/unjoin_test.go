package plugin

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// No syncer runs on the bed: a namespace placed on a target stays on it, and only --force
// removes the target.
var _ = Describe("unjoin --force asks", func() {
	// placed makes a lost target m and a namespace placed on it, and returns their names.
	placed := func(ctx context.Context) (string, string) {
		GinkgoHelper()
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}}, m, metav1.ConditionFalse, ago(time.Hour))
		ns := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: namespace(ctx, "unjoin")}, ns)).To(Succeed())
		workloadv1alpha1.SetState(ns, m, workloadv1alpha1.ResourceStateSync)
		Expect(hub.Update(ctx, ns)).To(Succeed())
		return m, ns.Name
	}
	// unchanged checks that m is not evicting and still holds ns.
	unchanged := func(ctx context.Context, m, ns string) {
		GinkgoHelper()
		Expect(getTarget(ctx, m).Spec.Evict).To(BeFalse())
		n := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
		Expect(workloadv1alpha1.Targets(n)).To(ConsistOf(m))
	}
	// removed checks that m is gone and ns carries nothing of it.
	removed := func(ctx context.Context, m, ns string) {
		GinkgoHelper()
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: m}, &workloadv1alpha1.SyncTarget{}))).To(BeTrue())
		n := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
		Expect(workloadv1alpha1.Targets(n)).To(BeEmpty())
	}
	keeps := func(m string) string {
		return "Warning: the member of " + m + " keeps its copies of the 1 object released above\n"
	}
	synctarget := func(m string) string { return "synctarget.workload.custody.dev/" + m }

	It("changes nothing unless the answer is yes, and then removes the target", func(ctx context.Context) {
		m, ns := placed(ctx)
		question := fmt.Sprintf("Remove synctarget/%s by force? It holds 1 namespaces. Whatever it still holds now is taken off it: "+
			"its member keeps its copies, and the volumes among them are not fenced. [y/N] ", m)
		for _, answer := range []string{"", "n\n", "Y es\n"} {
			r := answering(ctx, answer, "unjoin", m, "--force", "--timeout=0")
			Expect(r.out).To(Equal(question), "answer %q", answer)
			Expect(r.errOut).To(Equal("error: not confirmed: synctarget/" + m + " is unchanged\n"))
			Expect(r.code).To(Equal(1))
			unchanged(ctx, m, ns)
		}

		By("removing it on yes")
		r := answering(ctx, "y\n", "unjoin", m, "--force", "--timeout=0")
		Expect(r.out).To(Equal(question + synctarget(m) + " evicting\nnamespace/" + ns + " released\n" + synctarget(m) + " deleted\n"))
		Expect(r.errOut).To(Equal(keeps(m)))
		Expect(r.code).To(Equal(0))
		removed(ctx, m, ns)
	})

	It("prints with --dry-run what it would evict, release and delete, and changes nothing; --yes acts without asking", func(ctx context.Context) {
		m, ns := placed(ctx)
		r := custody(ctx, "unjoin", m, "--force", "--timeout=0", "--dry-run")
		Expect(r.out).To(Equal(synctarget(m) + " evicting (server dry run)\nnamespace/" + ns + " released (server dry run)\n" +
			synctarget(m) + " deleted (server dry run)\n"))
		Expect(r.errOut).To(Equal(keeps(m)))
		Expect(r.code).To(Equal(0))
		unchanged(ctx, m, ns)

		By("saying, without --force, that unjoin would wait for the target to hold nothing")
		Expect(succeeds(custody(ctx, "unjoin", m, "--timeout=2m", "--dry-run"))).To(Equal(synctarget(m) + " evicting (server dry run)\n" +
			m + " holds 1 namespaces: unjoin waits up to 2m0s for its syncer to let go of them, and removes it only once they are gone\n" +
			synctarget(m) + " deleted (server dry run)\n"))
		unchanged(ctx, m, ns)

		By("refusing, as unjoin would at once, a target that holds anything with --timeout=0")
		r = custody(ctx, "unjoin", m, "--timeout=0", "--dry-run")
		Expect(r.errOut).To(HavePrefix(`error: synctarget "` + m + `" still holds 1 object (1 namespaces) after 0s; nothing was removed`))
		Expect(r.code).To(Equal(1))
		unchanged(ctx, m, ns)

		By("acting at once with --yes")
		r = custody(ctx, "unjoin", m, "--force", "--timeout=0", "--yes")
		Expect(r.out).To(Equal(synctarget(m) + " evicting\nnamespace/" + ns + " released\n" + synctarget(m) + " deleted\n"))
		Expect(r.code).To(Equal(0))
		removed(ctx, m, ns)

		By("refusing it, now unknown, naming it")
		failsWith(custody(ctx, "unjoin", m, "--force", "--yes"), fmt.Sprintf("synctarget %q not found", m))
	})
})
