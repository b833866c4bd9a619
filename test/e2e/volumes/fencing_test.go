package volumes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/fencing"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
)

// The lost-owner flow: an owned volume whose owner stops answering moves to the survivor once
// a Fence cut the owner off the storage, and the owner gets the storage back only after it
// returned and let go of what the hub no longer gives it. The storage's oracle is checked
// after each spec (see the suite's AfterEach), and the writes after each failover.
var _ = Describe("A lost owner", func() {
	It("is fenced and its volume bound on the survivor, with every acknowledged write", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		write(lost, h, "before", 5)
		fenceTimes, failovers := metric("custody_fence_duration_seconds"), metric("custody_volume_failover_duration_seconds")
		start := time.Now()
		loseMember(ctx, lost, false)
		survivor := failedOver(ctx, ns, lost)
		AddReportEntry("member lost to volume bound on the survivor", ReportEntryVisibilityAlways,
			fmt.Sprintf("%s with a %s heartbeat", time.Since(start).Round(100*time.Millisecond), env.HeartbeatPeriod()))
		Expect(storage.Write(lost, h, "after the fence")).To(MatchError(simstorage.ErrWriteRefused))
		write(survivor, h, "on the survivor", 5)
		Expect(storage.Records(h)).To(HaveLen(10))
		Expect(storage.CheckWrites()).To(Succeed())
		Expect(metric("custody_fence_duration_seconds")).To(BeNumerically(">", fenceTimes), "no time to fence observed")
		Expect(metric("custody_volume_failover_duration_seconds")).To(BeNumerically(">", failovers), "no failover observed")
		Expect(metric("custody_fences")).To(BeNumerically(">", 0), "no Fence counted")
		fence := map[string]string{"fence": storagev1alpha1.FenceName(lost, domain), "target": lost, "domain": domain}
		Eventually(func() []float64 {
			return series("custody_fence_phase", with(fence, "phase", string(storagev1alpha1.FenceFenced)))
		}).WithContext(ctx).Should(Equal([]float64{1}), "the Fence's phase is not reported")
		Expect(series("custody_fence_unconfirmed_since_timestamp_seconds", fence)).To(BeEmpty(), "a confirmed Fence reported as waiting for the storage")
		Expect(series("custody_target_state_since_timestamp_seconds", map[string]string{"target": lost, "state": workloadv1alpha1.ReasonUnreachable})).
			To(ConsistOf(BeNumerically("~", float64(start.Unix()), 60)), "the lost target is not reported Unreachable since it was lost")
		comesBack(ctx, lost, ns)
		Eventually(func() []float64 { return series("custody_fence_phase", fence) }).WithContext(ctx).Should(BeEmpty(), "a lifted Fence is still reported")
	})

	It("that answers again within its fence delay keeps its namespace and its volume", func(ctx SpecContext) {
		ns, owner, h := ownedVolume(ctx)
		setFenceDelay(ctx, owner, &metav1.Duration{Duration: time.Minute})
		DeferCleanup(setFenceDelay, context.Background(), owner, (*metav1.Duration)(nil))
		loseMember(ctx, owner, true)
		Eventually(func(g Gomega) {
			g.Expect(targetCondition(ctx, g, owner, workloadv1alpha1.ConditionReady).Reason).To(Equal(workloadv1alpha1.ReasonUnreachable))
		}).WithContext(ctx).Should(Succeed())
		stays := func(g Gomega) {
			n := &corev1.Namespace{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
			g.Expect(workloadv1alpha1.ActiveTargets(n)).To(Equal([]string{owner}), "the namespace moved")
			leaving, _ := workloadv1alpha1.RemovalRequested(n, owner)
			g.Expect(leaving).To(BeFalse(), "the namespace is leaving %s", owner)
			st := ownership(ctx, ns, "data").Status
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Owner).To(Equal(owner))
		}
		Consistently(stays).WithContext(ctx).WithTimeout(10 * time.Second).Should(Succeed())
		Expect(env.StartMember(ctx, owner)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(targetCondition(ctx, g, owner, workloadv1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		}).WithContext(ctx).Should(Succeed())
		stays(Default)
		holders(ctx, h, owner)
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(owner, domain)}, &storagev1alpha1.Fence{}))).To(BeTrue(), "a Fence was made")
	})

	It("in a partition stops being written at the fence, and takes work again once clean", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		w := startWriter(lost, h)
		Eventually(w.accepted).Should(BeNumerically(">", 0))
		loseMember(ctx, lost, true)
		survivor := failedOver(ctx, ns, lost)
		w.stop()
		AddReportEntry("partitioned writer", ReportEntryVisibilityAlways, w.String())
		met, after := w.metFence()
		Expect(met).To(BeTrue(), "the writer never met the fence: %s", w)
		Expect(after).To(BeZero(), "writes were acknowledged after the fence")
		Expect(storage.CheckWrites()).To(Succeed(), "an acknowledged write was lost")
		write(survivor, h, "on the survivor", 3)
		comesBack(ctx, lost, ns)
		takesWork(ctx, lost)
	})

	It("is fenced by another executor when the first is lost mid-fence, and goes only after the first's NetworkFence", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		slowFencing(3 * time.Second)
		loseMember(ctx, lost, false)
		f := waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFencing))
			g.Expect(f.Status.Executor).NotTo(BeEmpty())
		})
		first := f.Status.Executor
		// Mid-fence: the first executor's NetworkFence exists, the storage has not answered.
		Eventually(func() error {
			return framework.Member(env.Bed, first).Client.Get(ctx, client.ObjectKey{Name: "custody-" + f.Name}, &csiaddonsv1alpha1.NetworkFence{})
		}).WithContext(ctx).Should(Succeed())
		loseMember(ctx, first, true)
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFenced))
			g.Expect(f.Status.Executor).NotTo(BeElementOf(first, lost))
			g.Expect(f.Finalizers).To(ContainElement(workloadv1alpha1.SyncerFinalizer(workloadv1alpha1.ToSyncTargetKey(first))))
		})
		Expect(env.StartMember(ctx, first)).To(Succeed())
		failedOver(ctx, ns, lost)
		// The first executor's NetworkFence, made for this Fence, is still in its member. The
		// storage fences CIDRs: unfenced after a later Fence of lost, it would lift that one.
		// So the lifted Fence stays, deleted, until that NetworkFence is gone.
		Expect(env.StopMember(first, true)).To(Succeed())
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.DeletionTimestamp).NotTo(BeNil())
			g.Expect(f.Finalizers).To(ConsistOf(workloadv1alpha1.SyncerFinalizer(workloadv1alpha1.ToSyncTargetKey(first))))
		})
		Expect(framework.Member(env.Bed, first).Client.Get(ctx, client.ObjectKey{Name: "custody-" + f.Name}, &csiaddonsv1alpha1.NetworkFence{})).To(Succeed())
		Expect(env.StartMember(ctx, first)).To(Succeed())
		comesBack(ctx, lost, ns)
	})

	It("fails over and comes back with the controller restarted at every step", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		write(lost, h, "before", 3)
		slowFencing(2 * time.Second)
		loseMember(ctx, lost, false)
		steps := []func(g Gomega, f *storagev1alpha1.Fence){
			func(g Gomega, f *storagev1alpha1.Fence) {
				g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFencing))
			},
			func(g Gomega, f *storagev1alpha1.Fence) {
				g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFenced))
			},
		}
		for _, step := range steps {
			waitFence(ctx, lost, step)
			restartController()
		}
		failedOver(ctx, ns, lost)
		restartController()
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Spec.State).To(Equal(storagev1alpha1.Unfenced))
		})
		restartController()
		comesBack(ctx, lost, ns)
		Expect(storage.CheckWrites()).To(Succeed())
	})

	It("that is back before the fence completed gets it lifted", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		write(lost, h, "before", 3)
		slowFencing(6 * time.Second)
		loseMember(ctx, lost, false)
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFencing))
		})
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		comesBack(ctx, lost, ns)
		vo := bound(ctx, ns, "data")
		holders(ctx, h, vo.Status.Owner)
		write(vo.Status.Owner, h, "after", 3)
		Expect(storage.CheckWrites()).To(Succeed())
	})

	It("back while slow storage still fences it shows the lift's own phase, and Fenced only once the storage fenced it", func(ctx SpecContext) {
		ns, lost, _, w := midFence(ctx, fenceAnswerDelay)
		By("bringing the member back mid-fence")
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		lifted := waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Spec.State).To(Equal(storagev1alpha1.Unfenced))
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceUnfencing))
			g.Expect(f.Status.Reason).To(Equal(fencing.ReasonWaitingForFenceAnswer))
		})
		Expect(storage.Fenced(lost)).To(BeFalse(), "the storage fenced before the lift was shown waiting for it")
		Expect(lifted.Status.FencedTime).To(BeNil())
		comesBack(ctx, lost, ns)
		w.neverAhead()
		Expect(w.storageFenced.IsZero()).To(BeFalse(), "the storage never answered the fence asked before the lift")
		Expect(w.storageUnfenced.After(w.storageFenced)).To(BeTrue(), "the late fence was not undone")
	})

	It("whose Fence an admin lifts mid-fence shows Unfencing, waits for the storage's answer, and unfences what it fenced late", func(ctx SpecContext) {
		ns, lost, f, w := midFence(ctx, 10*time.Second)
		Expect(hub.Delete(ctx, f)).To(Succeed())
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.DeletionTimestamp).NotTo(BeNil())
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceUnfencing))
			g.Expect(f.Status.Reason).To(Equal(fencing.ReasonWaitingForFenceAnswer))
		})
		Expect(storage.Fenced(lost)).To(BeFalse(), "the storage fenced before the lift was shown waiting for it")
		By("the storage answers the fence late: the target is Fenced while it is, and unfenced after")
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Status.Reason).To(Equal(fencing.ReasonUnfencingLateFence))
			g.Expect(f.Status.FencedTime).To(BeNil())
			g.Expect(storage.Fenced(lost)).To(BeTrue())
			g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.ConditionFenced).Status).To(Equal(metav1.ConditionTrue))
		})
		By("the target still lost: a new Fence, and the volume moves on it")
		failedOver(ctx, ns, lost)
		comesBack(ctx, lost, ns)
		w.neverAhead()
	})

	It("whose fence fails keeps its volume until the retried fence succeeds", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		const failure = "the storage array refused the fence"
		storage.FailFencing(failure)
		DeferCleanup(storage.FailFencing, "")
		loseMember(ctx, lost, false)
		waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFailed))
			g.Expect(f.Status.Message).To(ContainSubstring(failure))
		})
		Eventually(func(g Gomega) {
			c := targetCondition(ctx, g, lost, workloadv1alpha1.ConditionFenced)
			g.Expect(c.Reason).To(Equal(storagev1alpha1.ReasonFenceFailed))
			g.Expect(c.Message).To(ContainSubstring(failure))
		}).WithContext(ctx).Should(Succeed())
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonFenceFailed))
		})
		Consistently(func(g Gomega) {
			g.Expect(ownership(ctx, ns, "data").Status.Owner).To(Equal(lost))
			g.Expect(storage.Fenced(lost)).To(BeFalse())
		}).WithContext(ctx).Should(Succeed())
		storage.FailFencing("")
		failedOver(ctx, ns, lost)
		comesBack(ctx, lost, ns)
	})

	It("without network fencing waits for an admin's manual fence", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		fencing := withoutFencing(ctx, lost)
		loseMember(ctx, lost, false)
		// The admin powers the member off before saying so; its nodes stay off the storage
		// until Custody lifted the Fence.
		storage.PowerOff(lost)
		DeferCleanup(storage.PowerOn, lost)
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonOwnerLostNoFencing))
			g.Expect(st.Message).To(ContainSubstring("kubectl custody fence " + lost + " --powered-off"))
		})
		Consistently(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}, &storagev1alpha1.Fence{}))
		}).WithContext(ctx).Should(BeTrue(), "a Fence was asked for a target that cannot be network fenced")
		Expect(hub.Create(ctx, &storagev1alpha1.Fence{
			ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(lost, domain)},
			Spec:       storagev1alpha1.FenceSpec{TargetName: lost, Domain: domain, State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Manual},
		})).To(Succeed())
		failedOver(ctx, ns, lost)
		setFencing(ctx, lost, fencing)
		comesBack(ctx, lost, ns)
		storage.PowerOn(lost)
	})

	It("whose Fenced Fence a user deletes stays fenced until it is back and clean", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		loseMember(ctx, lost, false)
		failedOver(ctx, ns, lost)
		f := &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(lost, domain)}}
		Expect(hub.Delete(ctx, f)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(f), f)).To(Succeed())
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFenced))
			g.Expect(storage.Fenced(lost)).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
		comesBack(ctx, lost, ns)
	})

	It("that let go of the claim but not yet of its PV is fenced, and its volume moves", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		vo := ownership(ctx, ns, "data")
		By("keeping the owner's PV copy from going, so that it holds the volume through the hub PV alone")
		letGo := keepPV(ctx, lost, downPV(ctx, lost, ns, "data"))
		framework.Cordon(ctx, hub, lost, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, lost, false)
		Eventually(func(g Gomega) {
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, c)).To(Succeed())
			g.Expect(c.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel(lost)), "the owner did not let go of the claim")
			g.Expect(hubPV(ctx, vo.Status.VolumeName).Labels).To(HaveKey(workloadv1alpha1.StateLabel(lost)))
			g.Expect(ownership(ctx, ns, "data").Status.Reason).To(Equal(storagev1alpha1.ReasonWaitingForDetach))
		}).WithContext(ctx).Should(Succeed())

		By("losing the owner before it let go of the PV: only its loss can move the volume now")
		loseMember(ctx, lost, false)
		failedOver(ctx, ns, lost)
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		letGo(ctx)
		comesBack(ctx, lost, ns)
	})

	It("whose volume's claim is deleted while its Fence is lifted releases the volume once the Fence is gone", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		loseMember(ctx, lost, false)
		failedOver(ctx, ns, lost)
		// The lifting takes long enough for the deleted claim to wait for it.
		slowFencing(5 * time.Second)
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		f := waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
			g.Expect(f.Spec.State).To(Equal(storagev1alpha1.Unfenced))
		})
		c := claimObject(ns, "data", corev1.ReadWriteOnce)
		Expect(hub.Delete(ctx, c)).To(Succeed())
		// The record no longer has the lost member's labels, only its name as fenced off: the
		// Fence's going alone can tell the claim that nothing waits any more.
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonWaitingForFencedTarget))
			g.Expect(st.FencedOff).To(ConsistOf(lost))
		})
		framework.Gone(ctx, hub, f)
		framework.Gone(ctx, hub, c)
		Eventually(func() bool { return volume(h).Deleted.IsZero() }).WithContext(ctx).Should(BeFalse())
		Expect(volume(h).Releases).To(Equal(1))
	})
})

// fenceAnswerDelay is how long the slowed storage takes to answer a fencing operation in the
// spec of a member back mid-fence: the delay the issue measured the Fence running ahead with.
const fenceAnswerDelay = 30 * time.Second

// midFence loses the owner of a new owned volume while the storage takes d to answer each
// fencing operation, and returns, once the executor's NetworkFence exists and the storage has
// not answered it, the namespace, the lost owner, its Fence and a watch of it.
func midFence(ctx context.Context, d time.Duration) (string, string, *storagev1alpha1.Fence, *fenceWatch) {
	GinkgoHelper()
	ns, lost, _ := ownedVolume(ctx)
	slowFencing(d)
	loseMember(ctx, lost, false)
	f := waitFence(ctx, lost, func(g Gomega, f *storagev1alpha1.Fence) {
		g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFencing))
		g.Expect(f.Status.Executor).NotTo(BeEmpty())
	})
	Eventually(func() error {
		return framework.Member(env.Bed, f.Status.Executor).Client.Get(ctx, client.ObjectKey{Name: "custody-" + f.Name}, &csiaddonsv1alpha1.NetworkFence{})
	}).WithContext(ctx).Should(Succeed())
	return ns, lost, f, watchFence(lost)
}

// fenceWatch polls, every 100 ms, the Fence of a target, the target's Fenced condition and
// the storage, and records every moment the hub said Fenced while the storage had not fenced.
type fenceWatch struct {
	target string
	cancel context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// shownFenced and storageFenced are the first moments the hub said Fenced (the Fence's
	// phase or the target's condition) and the storage fenced the target; storageUnfenced the
	// first after that it no longer did.
	shownFenced, storageFenced, storageUnfenced time.Time
	// early are the moments the hub said Fenced ahead of the storage, with what said it.
	early []string
}

func watchFence(target string) *fenceWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &fenceWatch{target: target, cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	DeferCleanup(w.stop)
	return w
}

func (w *fenceWatch) run(ctx context.Context) {
	defer close(w.done)
	for {
		select {
		case <-ctx.Done():
			// One last look, so that what the spec waited for before it stopped the watch
			// is seen.
			w.poll(context.Background())
			return
		case <-time.After(100 * time.Millisecond):
		}
		w.poll(ctx)
	}
}

// poll looks once at the Fence, the target's Fenced condition and the storage.
func (w *fenceWatch) poll(ctx context.Context) {
	var said []string
	f := &storagev1alpha1.Fence{}
	if err := hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(w.target, domain)}, f); err == nil && f.Status.Phase == storagev1alpha1.FenceFenced {
		said = append(said, "the Fence's phase")
	}
	t := &workloadv1alpha1.SyncTarget{}
	if err := hub.Get(ctx, client.ObjectKey{Name: w.target}, t); err == nil && meta.IsStatusConditionTrue(t.Status.Conditions, workloadv1alpha1.ConditionFenced) {
		said = append(said, "the target's Fenced condition")
	}
	fenced, now := storage.Fenced(w.target), time.Now()
	w.mu.Lock()
	if len(said) > 0 && w.shownFenced.IsZero() {
		w.shownFenced = now
	}
	switch {
	case fenced && w.storageFenced.IsZero():
		w.storageFenced = now
	case !fenced && !w.storageFenced.IsZero() && w.storageUnfenced.IsZero():
		w.storageUnfenced = now
	}
	if len(said) > 0 && !fenced && w.storageFenced.IsZero() {
		w.early = append(w.early, fmt.Sprintf("%s: %v", now.Format(time.StampMilli), said))
	}
	w.mu.Unlock()
}

func (w *fenceWatch) stop() {
	w.cancel()
	<-w.done
}

// neverAhead stops the watch, reports what it saw, and fails if the hub said Fenced before
// the storage fenced.
func (w *fenceWatch) neverAhead() {
	GinkgoHelper()
	w.stop()
	AddReportEntry("Fence shown Fenced against the storage", ReportEntryVisibilityAlways, w.String())
	Expect(w.ahead()).To(BeEmpty(), "the Fence or the target's Fenced condition ran ahead of the storage")
}

// ahead are the moments the hub said Fenced before the storage fenced.
func (w *fenceWatch) ahead() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.early)
}

func (w *fenceWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lead := "never shown Fenced"
	if !w.shownFenced.IsZero() {
		lead = fmt.Sprintf("shown Fenced %s before the storage fenced", w.storageFenced.Sub(w.shownFenced).Round(100*time.Millisecond))
		if !w.storageFenced.IsZero() && !w.shownFenced.Before(w.storageFenced) {
			lead = fmt.Sprintf("shown Fenced %s after the storage fenced", w.shownFenced.Sub(w.storageFenced).Round(100*time.Millisecond))
		}
		if w.storageFenced.IsZero() {
			lead = "shown Fenced, and the storage never fenced"
		}
	}
	cut := "never cut off"
	if !w.storageFenced.IsZero() && !w.storageUnfenced.IsZero() {
		cut = fmt.Sprintf("cut off by the storage for %s", w.storageUnfenced.Sub(w.storageFenced).Round(100*time.Millisecond))
	}
	return fmt.Sprintf("%s (%d polls ahead); %s", lead, len(w.early), cut)
}

// ownedVolume binds an owned volume "data" in a new namespace of Location "loc", and returns
// the namespace, the owner and the volume's handle.
func ownedVolume(ctx context.Context) (string, string, string) {
	GinkgoHelper()
	ns := framework.App(ctx, hub, "loc")
	claim(ctx, ns, "data", corev1.ReadWriteOnce)
	vo := bound(ctx, ns, "data")
	h := handle(ctx, vo.Status.VolumeName)
	holders(ctx, h, vo.Status.Owner)
	return ns, vo.Status.Owner, h
}

// loseMember stops the member's syncer and, unless partition, its API server; the spec's
// cleanup brings back whatever is still stopped.
func loseMember(ctx context.Context, name string, partition bool) {
	GinkgoHelper()
	Expect(env.StopMember(name, partition)).To(Succeed())
	DeferCleanup(func(ctx SpecContext) {
		// Every member a failed spec left stopped comes back, not only this one: the bed is
		// Ready only with all of them.
		for _, m := range env.Members {
			if s := memberStatus(m.Name); !s.Syncer {
				Expect(env.StartMember(ctx, m.Name)).To(Succeed())
			}
		}
		Expect(env.WaitReady(ctx)).To(Succeed())
		framework.Gone(ctx, hub, &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(name, domain)}})
	}, NodeTimeout(3*time.Minute))
}

// memberStatus says what of the member runs.
func memberStatus(name string) environment.MemberStatus {
	GinkgoHelper()
	s, err := env.MemberStatus(name)
	Expect(err).NotTo(HaveOccurred())
	return s
}

// failedOver waits until the volume "data" of ns is Bound on the other member of "loc",
// after a Fence of lost held, and returns the survivor.
func failedOver(ctx context.Context, ns, lost string) string {
	GinkgoHelper()
	survivor := environment.Other(lost)
	vo := waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
		g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
		g.Expect(st.Owner).To(Equal(survivor))
	})
	if f := waitFence(ctx, lost, func(Gomega, *storagev1alpha1.Fence) {}); f.Spec.Mode == storagev1alpha1.Network {
		Expect(storage.Fenced(lost)).To(BeTrue(), "the volume is bound on %s while %s is not fenced", survivor, lost)
	}
	Expect(vo.Status.FencedOff).To(ContainElement(lost), "the volume did not move on the strength of the Fence")
	// The Fence's controller writes the target's condition apart from the volume's move: a
	// controller restarted just then writes it again.
	Eventually(func(g Gomega) {
		g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.ConditionFenced).Status).To(Equal(metav1.ConditionTrue))
	}).WithContext(ctx).Should(Succeed())
	// The lost member keeps its attachment until it is back; fenced, it cannot use it.
	Eventually(func() []string { return volume(handle(ctx, vo.Status.VolumeName)).Holders }).WithContext(ctx).Should(ContainElement(survivor))
	return survivor
}

// comesBack waits until the lost member is back: its copy of the claim is gone, it reported
// clean, it is unfenced in the storage, its Fence and every NetworkFence are gone, and it is
// neither Fenced nor unready.
func comesBack(ctx context.Context, lost, ns string) {
	GinkgoHelper()
	if s := memberStatus(lost); !s.Syncer {
		Expect(env.StartMember(ctx, lost)).To(Succeed())
	}
	Eventually(func(g Gomega) {
		err := framework.Member(env.Bed, lost).Client.Get(ctx, framework.CopyKey(hubID, lost, ns, "data"), &corev1.PersistentVolumeClaim{})
		if vo := ownership(ctx, ns, "data"); vo.Status.Owner != lost {
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the claim's copy is still in %s", lost)
		}
		g.Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}, &storagev1alpha1.Fence{}))).To(BeTrue(), "the Fence is still there")
		g.Expect(storage.Fenced(lost)).To(BeFalse())
		g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.ConditionFenced).Status).To(Equal(metav1.ConditionFalse))
		g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
		for _, m := range env.Members {
			list := &csiaddonsv1alpha1.NetworkFenceList{}
			g.Expect(m.Client.List(ctx, list)).To(Succeed())
			g.Expect(list.Items).To(BeEmpty(), "NetworkFences left in %s", m.Name)
		}
	}).WithContext(ctx).Should(Succeed())
}

// takesWork shows that the target takes work again: with the other member of "loc" cordoned,
// a new namespace's volume is provisioned on it.
func takesWork(ctx context.Context, target string) {
	GinkgoHelper()
	framework.Cordon(ctx, hub, environment.Other(target), true)
	DeferCleanup(framework.Cordon, context.Background(), hub, environment.Other(target), false)
	_, owner, _ := ownedVolume(ctx)
	Expect(owner).To(Equal(target))
}

func targetCondition(ctx context.Context, g Gomega, target, kind string) metav1.Condition {
	t := &workloadv1alpha1.SyncTarget{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Name: target}, t)).To(Succeed())
	c := meta.FindStatusCondition(t.Status.Conditions, kind)
	g.Expect(c).NotTo(BeNil(), "%s has no condition %s", target, kind)
	return *c
}

// waitFence waits until the Fence of target in the suite's domain passes check.
func waitFence(ctx context.Context, target string, check func(g Gomega, f *storagev1alpha1.Fence)) *storagev1alpha1.Fence {
	GinkgoHelper()
	f := &storagev1alpha1.Fence{}
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(target, domain)}, f)).To(Succeed())
		check(g, f)
	}).WithContext(ctx).Should(Succeed())
	return f
}

// write writes n records as member, every one acknowledged.
func write(member, h, prefix string, n int) {
	GinkgoHelper()
	for i := range n {
		Expect(storage.Write(member, h, fmt.Sprintf("%s %s %d", member, prefix, i))).To(Succeed())
	}
}

// slowFencing makes the storage take d for each fencing operation during the spec.
func slowFencing(d time.Duration) {
	storage.SlowFencing(d)
	DeferCleanup(storage.SlowFencing, time.Duration(0))
}

func restartController() {
	GinkgoHelper()
	Expect(env.StopController()).To(Succeed())
	Expect(env.StartController()).To(Succeed())
}

// withoutFencing takes the target's spec.fencing away for the spec and returns it.
func withoutFencing(ctx context.Context, target string) *workloadv1alpha1.FencingSpec {
	GinkgoHelper()
	t := &workloadv1alpha1.SyncTarget{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: target}, t)).To(Succeed())
	setFencing(ctx, target, nil)
	DeferCleanup(setFencing, context.Background(), target, t.Spec.Fencing)
	return t.Spec.Fencing
}

// writer stands in for an application on a member: it writes a record every 20ms and
// remembers which the storage acknowledged, and whether it acknowledged any after it first
// refused one because the member was fenced.
type writer struct {
	member, handle string
	cancel         context.CancelFunc
	done           chan struct{}

	mu             sync.Mutex
	acked, refused int
	// fenced: a write was refused while the member was fenced; ackedAfter counts the writes
	// acknowledged since.
	fenced     bool
	ackedAfter int
}

func startWriter(member, h string) *writer {
	ctx, cancel := context.WithCancel(context.Background())
	w := &writer{member: member, handle: h, cancel: cancel, done: make(chan struct{})}
	go w.run(ctx)
	DeferCleanup(w.stop)
	return w
}

func (w *writer) run(ctx context.Context) {
	defer close(w.done)
	for i := 0; ; i++ {
		err := storage.Write(w.member, w.handle, fmt.Sprintf("%s writer %d", w.member, i))
		w.mu.Lock()
		switch {
		case err == nil && w.fenced:
			w.acked++
			w.ackedAfter++
		case err == nil:
			w.acked++
		default:
			w.refused++
			w.fenced = w.fenced || storage.Fenced(w.member)
		}
		w.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (w *writer) stop() {
	w.cancel()
	<-w.done
}

func (w *writer) accepted() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acked
}

// metFence tells whether a write was refused at the fence, and how many were acknowledged
// after that.
func (w *writer) metFence() (bool, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fenced, w.ackedAfter
}

func (w *writer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("%d writes acknowledged, %d refused", w.acked, w.refused)
}

// series are the values of the controller's metric name whose labels include labels.
func series(name string, labels map[string]string) []float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	var values []float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(labels) {
				values = append(values, m.GetGauge().GetValue())
			}
		}
	}
	return values
}

// with is labels and one more.
func with(labels map[string]string, name, value string) map[string]string {
	out := maps.Clone(labels)
	out[name] = value
	return out
}

// metric sums what the controller's metric name reports: a gauge's values, or a histogram's
// observation count.
func metric(name string) float64 {
	GinkgoHelper()
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// keepPV holds the member's PV with a finalizer of the spec's own, so that it stays, deleted,
// until the returned function (or the spec's cleanup) lets it go.
func keepPV(ctx context.Context, key string, pv *corev1.PersistentVolume) func(context.Context) {
	GinkgoHelper()
	const keep = "e2e.custody.dev/keep"
	c := framework.Member(env.Bed, key).Client
	patchFinalizers(ctx, c, pv, append(slices.Clone(pv.Finalizers), keep))
	letGo := func(ctx context.Context) {
		GinkgoHelper()
		err := c.Get(ctx, client.ObjectKeyFromObject(pv), pv)
		if apierrors.IsNotFound(err) {
			return
		}
		Expect(err).NotTo(HaveOccurred())
		patchFinalizers(ctx, c, pv, slices.DeleteFunc(slices.Clone(pv.Finalizers), func(f string) bool { return f == keep }))
	}
	DeferCleanup(letGo)
	return letGo
}

// patchFinalizers sets the object's finalizers in c, in a merge patch made against its
// version, so that no one else's change is lost.
func patchFinalizers(ctx context.Context, c client.Client, obj client.Object, finalizers []string) {
	GinkgoHelper()
	orig := obj.DeepCopyObject().(client.Object)
	obj.SetFinalizers(finalizers)
	Expect(c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))).To(Succeed())
}
