//go:build faults

package faults

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// regressions are the schedules that found bugs, kept as drawn then, so that a change to
// Draw does not lose them. TestFaults runs them before each batch.
var regressions = []Schedule{
	// A claim deleted while its owner was leaving for a move: coordination set the release
	// policy Delete after the owner's syncer had let go with Retain, counted the storage as
	// released and deleted the hub PV. The storage leaked with no record of it. Later it
	// caught the release asked of the next owner while the member the volume was fenced away
	// from still had it attached: a deleted claim now waits for that member's Fence to go.
	{Seed: 1795497206377277385, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 1240 * time.Millisecond, Kind: RestartHub, For: 850 * time.Millisecond},
		{At: 1990 * time.Millisecond, Kind: StopMember, Target: Owner, For: 510 * time.Millisecond},
		{At: 2000 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1900 * time.Millisecond},
		{At: 2420 * time.Millisecond, Kind: DeleteClaim, Name: "c3"},
		{At: 2650 * time.Millisecond, Kind: KillController, For: 460 * time.Millisecond},
	}},
	// Two members' syncers started again just as the hub's API server came back, before it
	// served Custody's API: each exited, and the bed did not run it again as a kubelet
	// restarts a container that exits. Both targets stayed Unreachable, and the claims on
	// them could not be deleted.
	{Seed: 1795498559246565233, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 970 * time.Millisecond, Kind: StopMember, Target: "m1", For: 3800 * time.Millisecond},
		{At: 2060 * time.Millisecond, Kind: RestartHub, For: 2470 * time.Millisecond},
		{At: 2670 * time.Millisecond, Kind: StopMember, Target: "m2", For: 1510 * time.Millisecond},
	}},
	// Claims deleted while their volumes were still upsynced from the member that
	// provisioned them: coordination gave the owner no release policy, as its syncer had made
	// no PV copy, and asked the upsynced PV to leave, which no syncer acted on. The claims
	// never finished.
	{Seed: 5002, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{At: 220 * time.Millisecond, Kind: SlowFencing, Delay: 290 * time.Millisecond, For: 1660 * time.Millisecond},
		{At: 300 * time.Millisecond, Kind: DeleteClaim, Name: "c2"},
		{At: 570 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 1340 * time.Millisecond, Kind: SlowStorage, Delay: 530 * time.Millisecond, For: 2720 * time.Millisecond},
		{At: 2680 * time.Millisecond, Kind: FailFencing, For: time.Second},
	}},
	// A claim deleted just after it was created, while provisioning: its VolumeOwnership's
	// reclaim record went from set to empty, which the status apply sent as an empty object
	// and the API server refused as null. Coordination could record no decision again.
	{Seed: 1795502349290418337, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{At: 350 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 970 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 1940 * time.Millisecond, Kind: SlowStorage, Delay: 480 * time.Millisecond, For: 900 * time.Millisecond},
		{At: 2220 * time.Millisecond, Kind: SlowFencing, Delay: 720 * time.Millisecond, For: 1510 * time.Millisecond},
	}},
	// The controller started again while the hub's API server was down: its manager could
	// not be made, and the bed did not run it again as a Deployment would.
	{Seed: 1795502349290418353, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 1700 * time.Millisecond, Kind: StopMember, Target: Owner, For: 850 * time.Millisecond},
		{At: 2480 * time.Millisecond, Kind: KillController, For: 300 * time.Millisecond},
		{At: 2660 * time.Millisecond, Kind: Cordon, Target: Owner, For: 2440 * time.Millisecond},
		{At: 2690 * time.Millisecond, Kind: RestartHub, For: 780 * time.Millisecond},
	}},
	// A member stopped and fenced came back while its claim was moving away: its syncer made a
	// copy of the volume from a hub view that still gave it the volume, coordination took the
	// volume from it on the Fence, and the Fence was lifted on a clean report made before
	// that. The claim, deleted next, had its storage released while the member's copy still
	// named it. Found with schedule 1795511154734257694 running beside it; a Fence is now
	// lifted only on a clean report made after the unfence was asked.
	{Seed: 1795511154734257695, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 1},
		{At: 230 * time.Millisecond, Kind: StopMember, Target: "m3", For: 690 * time.Millisecond},
		{At: 480 * time.Millisecond, Kind: Cordon, Target: Owner, For: 2380 * time.Millisecond},
		{At: 1340 * time.Millisecond, Kind: KillSyncer, Target: "m3", For: 480 * time.Millisecond},
		{At: 1370 * time.Millisecond, Kind: KillController, For: 1340 * time.Millisecond},
	}},
	// A member that provisioned a claim's volume was stopped before its syncer took the
	// volume's hub PV as Sync, and fenced; the claim moved on the Fence. Back, the member
	// reported clean while it still had the PV its provisioner made, as that PV carried no
	// mark of the syncer's, and nothing removed it. The Fence was lifted, and the claim,
	// deleted next, had its storage released while that PV still named it. Found in a soak
	// with another schedule beside it; the syncer now marks a PV the member provisioned
	// before it upsyncs it, counts it, and removes it once the hub gives it away.
	{Seed: 1795516352756666685, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteMany},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{At: 740 * time.Millisecond, Kind: SlowFencing, Delay: 400 * time.Millisecond, For: 1030 * time.Millisecond},
		{At: 1260 * time.Millisecond, Kind: StopMember, Target: "m3", For: 1720 * time.Millisecond},
		{At: 2180 * time.Millisecond, Kind: StopMember, Target: Owner, For: 2570 * time.Millisecond},
	}},
	// A user set Retain on a claim's hub PV while it was still upsynced from the member that
	// provisioned it: the upsync, following the member's PV, put back the class's Delete, and
	// the claim, deleted next, had its storage released. Found six at a time; the upsync now
	// leaves the hub PV's reclaim policy and binding alone.
	{Seed: 1795524375130796923, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 1},
		{At: 300 * time.Millisecond, Kind: Keep, Name: "c1"},
		{At: 1380 * time.Millisecond, Kind: SlowFencing, Delay: 460 * time.Millisecond, For: 2510 * time.Millisecond},
	}},
	// A claim left the member that was provisioning its volume before the member's binder
	// named the volume in it: the syncer deleted the claim without giving the PV the release
	// policy, as it found the PV only by the claim's volumeName. The PV kept its class's
	// Delete, was upsynced while the claim was terminating and moved to the next owner, and
	// the member released the storage under it. Found four at a time, with 1795525310427459739
	// beside it; the syncer now finds the PV by its claimRef too.
	{Seed: 1795525310427459747, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 1280 * time.Millisecond, Kind: StopMember, Target: Owner, For: 1820 * time.Millisecond},
		{At: 2020 * time.Millisecond, Kind: Cordon, Target: Owner, For: 2930 * time.Millisecond},
	}},
	// The same as the next one, found before it was understood: a claim left the member
	// provisioning its volume, the volume was upsynced Retain from the claim being deleted,
	// and the next owner's copy never released the storage when the claim was deleted.
	{Seed: 1795525310427459739, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 640 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1670 * time.Millisecond},
		{At: 1410 * time.Millisecond, Kind: SlowStorage, Delay: 400 * time.Millisecond, For: 1450 * time.Millisecond},
		{At: 2190 * time.Millisecond, Kind: DeleteClaim, Name: "c2"},
	}},
	// A claim left the member provisioning its volume: the syncer gave the PV Retain, as it
	// should, then upsynced it from the claim being deleted, Retain and release-policy
	// annotation with it. The annotation came down to the next owner's copy, which then held
	// Retain against coordination's Delete when the claim was deleted: the storage was never
	// released. The upsync now leaves a claim being deleted alone, and the release-policy
	// annotation stays in the member that set it.
	{Seed: 1795526680049828886, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteMany},
		{At: 400 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1540 * time.Millisecond},
		{At: 1560 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 2460 * time.Millisecond, Kind: Partition, Target: "m2", For: 1220 * time.Millisecond},
	}},
	// A StatefulSet's claim deleted on the member that provisioned its volume: the member's
	// provisioner released the storage and deleted the PV, and the syncer, whose hub PV still
	// gave the target the volume, made the PV again under the member's name, from a view
	// that still said Delete. The storage was released a second time. The syncer no longer
	// makes again a member's own PV whose claim is being deleted.
	{Seed: 1795527732058181740, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 1},
		{At: 1170 * time.Millisecond, Kind: FailStorage, For: 990 * time.Millisecond},
		{At: 2030 * time.Millisecond, Kind: FailFencing, For: 1920 * time.Millisecond},
		{At: 2340 * time.Millisecond, Kind: KillSyncer, Target: Owner, For: 180 * time.Millisecond},
	}},
	// A member stopped while a StatefulSet claim's volume was moving from it came back fenced
	// and reported clean: the hub still gave it the volume, asked to leave, and its syncer
	// counted that as given. Coordination then took the volume on the Fence, the Fence was
	// lifted on that report, and the member was unfenced with the volume still attached
	// while the next owner attached it too (with 1795529060726341677 beside it, which saw
	// the attach refused). A claim or PV the hub asks to leave now counts as held.
	{Seed: 1795529060726341678, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{At: 290 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1820 * time.Millisecond},
		{At: 670 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 690 * time.Millisecond, Kind: KillController, For: 790 * time.Millisecond},
		{At: 2330 * time.Millisecond, Kind: FailStorage, For: 450 * time.Millisecond},
	}},
	// The clean-up deleted the StatefulSet and then its claims; the claims' deletion reached
	// the StatefulSet controller before the set's, from a cache that still showed the set, and
	// it made the claims again, which then stayed. A set is now confirmed alive past the cache
	// before its claims are made.
	{Seed: 1795532163276819896, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteMany},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{At: 520 * time.Millisecond, Kind: Keep, Name: "c2"},
		{At: 740 * time.Millisecond, Kind: SlowStorage, Delay: 160 * time.Millisecond, For: 1700 * time.Millisecond},
		{At: 1840 * time.Millisecond, Kind: SlowFencing, Delay: 460 * time.Millisecond, For: 2750 * time.Millisecond},
		{At: 2540 * time.Millisecond, Kind: SlowStorage, Delay: 550 * time.Millisecond, For: 510 * time.Millisecond},
	}},
	// A claim that had moved to m2 was deleted: m2 let it go with Delete, and its provisioner
	// released the storage and deleted the PV. The hub PV was still Sync for m2, and m2's
	// syncer made its copy again, which was released a second time. The downsync no longer
	// makes a PV whose claim is being deleted, whoever made the PV first.
	{Seed: 1795532163276819998, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 260 * time.Millisecond, Kind: Cordon, Target: Owner, For: 740 * time.Millisecond},
		{At: 920 * time.Millisecond, Kind: RestartHub, For: 240 * time.Millisecond},
	}},
	// A claim deleted just after it was created: coordination's cache showed neither its
	// binding nor the PV upsynced for it, it counted the volume as held by no target and
	// finished the claim, and the storage stayed with no record of it. A deleted claim's PV
	// is now looked up past the cache by the name its upsync gives it.
	{Seed: 1795532163276819999, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 400 * time.Millisecond, Kind: DeleteClaim, Name: "c3"},
		{At: 1450 * time.Millisecond, Kind: Cordon, Target: Owner, For: 2040 * time.Millisecond},
		{At: 1470 * time.Millisecond, Kind: FailStorage, For: 730 * time.Millisecond},
		{At: 1800 * time.Millisecond, Kind: KillController, For: 1240 * time.Millisecond},
		{At: 2300 * time.Millisecond, Kind: FailStorage, For: 220 * time.Millisecond},
	}},
	// A claim provisioning on one member had its PV upsynced; its namespace left that member
	// before coordination's cache showed the hub PV, and the claim was given to another
	// member, which provisioned a second volume: two holders, for good. A claim is now given
	// to a target to provision only once the API server confirms that no PV was upsynced.
	{Seed: 1795536425162053767, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{At: 200 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1640 * time.Millisecond},
		{At: 400 * time.Millisecond, Kind: KillSyncer, Target: Owner, For: 650 * time.Millisecond},
		{At: 1070 * time.Millisecond, Kind: KillSyncer, Target: Owner, For: 420 * time.Millisecond},
	}},
	// A shared claim deleted: its owner set its PV's reclaim policy Delete and let the claim
	// go, and the storage released the volume and deleted the PV. The PV's downsync, working
	// from a cache that still showed the PV, applied it, which made it again, and the storage
	// released the volume a second time. A PV whose claim is being deleted is now neither made
	// nor changed.
	{Seed: 1795541519752384972, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{At: 280 * time.Millisecond, Kind: StopMember, Target: "m1", For: 3300 * time.Millisecond},
		{At: 690 * time.Millisecond, Kind: Cordon, Target: Owner, For: 2870 * time.Millisecond},
		{At: 840 * time.Millisecond, Kind: Partition, Target: Owner, For: 1770 * time.Millisecond},
		{At: 3660 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1600 * time.Millisecond},
		{At: 3680 * time.Millisecond, Kind: StopMember, Target: "m1", For: 640 * time.Millisecond},
	}},
	// Two claims moved from the member that provisioned them and back. The returning claim's
	// copy reached the member before its hub PV reached the syncer's cache: it was bound to a
	// PV name of the syncer's making, while the hub PV named the member's own PV, which the
	// claim could then never be bound to. The volume was stuck. The syncer now reads the hub
	// PV past its cache when the cache does not hold it.
	{Seed: 1795543917608141167, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 430 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1930 * time.Millisecond},
		{At: 550 * time.Millisecond, Kind: FailFencing, For: 2200 * time.Millisecond},
		{At: 2460 * time.Millisecond, Kind: Cordon, Target: Owner, For: 650 * time.Millisecond},
		{At: 2640 * time.Millisecond, Kind: RestartHub, For: 260 * time.Millisecond},
	}},
	// A claim deleted in the second it was bound: its owner's syncer had not taken up the
	// hub PV yet, so coordination let the owner go without a release policy, and the owner
	// kept the storage (Retain). A moment later coordination set the policy Delete, counted
	// the storage as released and deleted the hub PV: the storage stayed with no record.
	// The owner now lets go only once it has taken up the PV, and the policy does not change
	// after it let go.
	{Seed: 1795545801652583705, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 1930 * time.Millisecond, Kind: FailStorage, For: 1040 * time.Millisecond},
	}},
	// Claims deleted while they moved away from a member that a Fence had cut off (the
	// faults of the schedules beside it partitioned that member): coordination's release of the
	// fenced owner in its place failed on a conflict, and the deleted claim then waited for
	// that owner to let go, which a fenced member's syncer never does while it is held. The
	// member never came back clean, so it stayed fenced, and every schedule after it waited.
	// A deleted claim's fenced holders are now released in their place first.
	{Seed: 1795582567185357047, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 1220 * time.Millisecond, Kind: KillController, For: 1320 * time.Millisecond},
		{At: 2170 * time.Millisecond, Kind: RestartHub, For: 810 * time.Millisecond},
		{At: 2700 * time.Millisecond, Kind: Partition, Target: Owner, For: 2420 * time.Millisecond},
	}},
	// A shared claim deleted a second after it moved (its owner cordoned): the next owner's
	// syncer had made the claim's copy, not yet the PV's, and made none once the claim was
	// being deleted. Its copy of the claim went without releasing anything, coordination
	// counted the storage released under Delete and deleted the hub PV: the storage stayed
	// with no record. A claim's copy that is to release its storage now waits for its PV,
	// which is made for it.
	{Seed: 1795748324162900634, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteMany},
		{At: 330 * time.Millisecond, Kind: FailFencing, For: 1480 * time.Millisecond},
		{At: 770 * time.Millisecond, Kind: RestartHub, For: 590 * time.Millisecond},
		{At: 980 * time.Millisecond, Kind: Cordon, Target: Owner, For: 980 * time.Millisecond},
		{At: 1980 * time.Millisecond, Kind: DeleteClaim, Name: "c3"},
		{At: 2520 * time.Millisecond, Kind: FailFencing, For: 810 * time.Millisecond},
	}},
	// A claim kept with Retain, then restored by a failover of its pair from a replica: the
	// restored volume's hub PV said Delete, and the storage went with the claim. The
	// restored volume now takes the Retain of the hub PV of the volume set aside. (Drawn
	// with a failover threshold of 1.49 s, since raised.)
	{Seed: 1030, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{Kind: Protect, Interval: "1d", Threshold: 4 * time.Second},
		{At: 250 * time.Millisecond, Kind: LosePrimary, For: 4890 * time.Millisecond},
		{At: 610 * time.Millisecond, Kind: DeleteClaim, Name: "c3"},
		{At: 630 * time.Millisecond, Kind: FailStorage, For: 2380 * time.Millisecond},
		{At: 680 * time.Millisecond, Kind: RestartHub, For: 530 * time.Millisecond},
		{At: 2300 * time.Millisecond, Kind: Keep, Name: "c1"},
	}},
	// A primary lost and back during the failover of its pair synced once more to the
	// secondary (every minute), and VolSync deleted the image the failover had picked to
	// restore from: the claims waited for ever. The destinations now keep their images while
	// a failover fences, and it picks one kept. It needs the minute to turn during the
	// failover to play again. (Drawn with a failover threshold of 0.91 s, since raised.)
	// Later, beside other schedules' restarts of the hub, every target turned Unreachable at
	// once, and the pair, failed over to west, failed over back to east before any volume
	// had replicated there: its claims restored from nothing and waited for ever. A target
	// now keeps its grace while the hub does not answer, and a pair fails over on its own
	// only to a Location with a replica of every volume.
	{Seed: 1795768220811003155, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{Kind: Protect, Interval: "1m", Threshold: 4 * time.Second},
		{At: 220 * time.Millisecond, Kind: DeleteClaim, Name: "c2"},
		{At: 380 * time.Millisecond, Kind: RestartHub, For: 850 * time.Millisecond},
		{At: 420 * time.Millisecond, Kind: SlowStorage, Delay: 400 * time.Millisecond, For: 2140 * time.Millisecond},
		{At: 2290 * time.Millisecond, Kind: LosePrimary, For: 2360 * time.Millisecond},
	}},
	// The primary lost as the namespace's source moved between its two members:
	// the first source's syncer deleted its side of a replication and stopped before it let
	// go. Started again, it no longer saw the replication, labelled for the new source only,
	// and its finalizer held it for ever; after the failover the pair never replicated that
	// volume back, and stayed FailedOver while it said every volume was protected by the
	// replicas it had restored from. Syncers now look at what they hold when they start.
	// Later, once a failover waited for its workloads to be ready: w1 reported the
	// StatefulSet's status the same as e2 had, so the status stayed the Location left's, and
	// the pair's clearing of it, which took the collisionCount away, was refused; the
	// failover never completed and held the Fences. The clearing keeps the collisionCount.
	{Seed: 1795783036150780763, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 1},
		{Kind: Protect, Interval: "1d", Threshold: 5720 * time.Millisecond},
		{At: 280 * time.Millisecond, Kind: Partition, Target: Owner, For: 3660 * time.Millisecond},
		{At: 2680 * time.Millisecond, Kind: LosePrimary, For: 4290 * time.Millisecond},
	}},
	// The primary lost while its members came and went and the hub restarted: the pair
	// wrote the failover's restore step and asked the claim's restore, and a later step,
	// decided from a cached pair that did not show that write yet, called the failover off as
	// the primary answered again. The claim was left in the other Location's storage domain,
	// and its namespace could be placed nowhere for 8 minutes. A pair whose cached status is
	// not the one last written is now read past the cache.
	{Seed: 1795800000000000148, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 1},
		{Kind: Protect, Interval: "1d", Threshold: 5520 * time.Millisecond},
		{At: 310 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
		{At: 630 * time.Millisecond, Kind: Cordon, Target: Owner, For: 1570 * time.Millisecond},
		{At: 900 * time.Millisecond, Kind: StopMember, Target: Owner, For: 1380 * time.Millisecond},
		{At: 1890 * time.Millisecond, Kind: LosePrimary, Partition: true, For: 760 * time.Millisecond},
		{At: 2580 * time.Millisecond, Kind: RestartHub, For: 540 * time.Millisecond},
		{At: 2660 * time.Millisecond, Kind: Partition, Target: Owner, For: 750 * time.Millisecond},
	}},
	// A claim moved back to a member whose Fence was still being lifted, and whose old copy
	// of the namespace was still terminating: its syncer put its finalizer on the claim and
	// the PV but could not make their copies. The claim was deleted; coordination read the
	// finalizer as copies that exist, gave the member the release policy Delete, and deleted
	// the hub PV once the member let go with nothing to release. The storage stayed, named by
	// no hub PV. A fenced target now takes no namespace, and the syncer's finalizer comes
	// only with the copy. The replay alone passes: the failure took the timing of the
	// schedules beside it, which the end-to-end spec "Deleting a claim keeps the storage, on
	// record, when the owner it moved to never made its copy" sets up on purpose.
	{Seed: 1795810848190238560, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 240 * time.Millisecond, Kind: Partition, Target: "m3", For: 3780 * time.Millisecond},
		{At: 470 * time.Millisecond, Kind: Partition, Target: Owner, For: 2280 * time.Millisecond},
		{At: 2850 * time.Millisecond, Kind: StopMember, Target: Owner, For: 2500 * time.Millisecond},
	}},
	// A pair's replication of c2 moved from e1 to e2 as the claim did. e1's syncer deleted
	// its ReplicationSource and was stopped before it deleted its copy of the pair's key.
	// Started again, it deleted the copy and waited for a deletion event that its watches
	// (ReplicationSources and ReplicationDestinations) never gave, so its finalizer held the
	// replication, deleted when the pair failed over, for ever: c2 was never protected from
	// west, and the pair never had all its volumes protected. The syncer now watches its
	// copies of the key too. The replay alone needs e1's syncer stopped at that moment, which
	// the schedules beside it did; the syncer suite's spec "a VolumeReplication whose
	// ReplicationSource it deleted, and not yet its copy of the key" sets it up on purpose.
	{Seed: 1795833598228079633, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: Protect, Interval: "1d", Threshold: 6790 * time.Millisecond},
		{At: 340 * time.Millisecond, Kind: Cordon, Target: Owner, For: 920 * time.Millisecond},
		{At: 550 * time.Millisecond, Kind: KillController, For: 1170 * time.Millisecond},
		{At: 1040 * time.Millisecond, Kind: KillSyncer, Target: "w1", For: 950 * time.Millisecond},
		{At: 1810 * time.Millisecond, Kind: FailFencing, For: 1950 * time.Millisecond},
		{At: 2100 * time.Millisecond, Kind: LosePrimary, For: 1910 * time.Millisecond},
	}},
	// A pair failed over from east to west, a Location of one member. The hub restarted
	// (a schedule beside this one), every heartbeat went stale, and with a threshold of 4 s
	// the pair took west for lost and failed over back to east, whose targets both still
	// held the Fences of the first failover: it restored every claim there with no replica,
	// and asked for a Fence of w1 that no other member of its domain could execute, Pending
	// for good. A Location takes a failover only while a target of it answers and no Fence
	// holds it. The replay alone needs the hub restart beside it; the dr package's case "a
	// pair whose active Location is lost does not fail over to a Location every target of
	// which is still fenced" sets the failure up on purpose.
	{Seed: 1795844994378399984, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{Kind: Protect, Interval: "1d", Threshold: 4090 * time.Millisecond},
		{At: 900 * time.Millisecond, Kind: LosePrimary, For: 1140 * time.Millisecond},
		{At: 2460 * time.Millisecond, Kind: SlowStorage, Delay: 260 * time.Millisecond, For: 2570 * time.Millisecond},
	}},
	// c1's owner m1 was stopped and fenced, and c1 moved on; its record listed m1 as fenced
	// off it. m1 came back, cleaned up, and its Fence was lifted and went, but a Fence mapped
	// only to the claims labelled for its target, and coordination had taken m1's labels off
	// c1: c1 was never looked at again. Deleted at the clean-up, it waited for m1's Fence, by
	// then gone, until the harness gave up. A Fence now maps to the claims whose records list
	// its target as fenced off too.
	{Seed: 1795844994378400550, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteOnce},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteOnce},
		{At: 210 * time.Millisecond, Kind: DeleteClaim, Name: "c2"},
		{At: 560 * time.Millisecond, Kind: Keep, Name: "c2"},
		{At: 990 * time.Millisecond, Kind: StopMember, Target: Owner, For: 3620 * time.Millisecond},
	}},
	// The owner m2 was stopped as it provisioned data-db-0, before its syncer recorded the
	// volume on the hub (a hub restart beside this schedule). The namespace moved to m3,
	// which recorded its own volume under the same hub PV name. Back, m2 deleted its copy of
	// the claim, its PV went Released, Retain, while the hub still gave it the claim; the
	// claim then left m2, but its going woke nothing that looked at the PV again. m2 kept
	// it for good, never reported clean, and its Fence was never lifted: every later
	// schedule waited for it. A claim leaving a target now wakes the PV the member
	// provisioned for it. The replay alone needs the hub restart beside it; the syncer
	// suite's spec "removes, keeping the storage, the PV member 1 provisioned whose hub
	// record is gone" sets the failure up on purpose.
	{Seed: 1795865665310029059, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateStatefulSet, Name: "db", Replicas: 2},
		{At: 630 * time.Millisecond, Kind: StopMember, Target: Owner, For: 3740 * time.Millisecond},
		{At: 650 * time.Millisecond, Kind: DeleteClaim, Name: "c1"},
	}},
	// The owner m2 was cut off from the hub as it provisioned c2, and the namespace moved to
	// m1. Back, m2 let the claim go with its volume kept Retain before its upsync had recorded
	// the volume on the hub; the upsync, reading a cache a moment behind, recorded it just as
	// the PV's downsync, finding neither a record nor the claim given to m2, deleted the PV,
	// Retain. The record, whose member PV was gone, was pruned, and m1 provisioned a volume of
	// its own: m2's storage stayed, known to nobody. A claim's copy bound to a volume the
	// member provisioned now goes only once the hub holds the record of it.
	{Seed: 1795959258269395667, Steps: []Step{
		{Kind: CreateClaim, Name: "c1", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c2", Mode: corev1.ReadWriteMany},
		{Kind: CreateClaim, Name: "c3", Mode: corev1.ReadWriteOnce},
		{At: 1210 * time.Millisecond, Kind: Partition, Target: Owner, For: 3280 * time.Millisecond},
	}},
}
