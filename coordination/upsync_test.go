package coordination

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestProvisionedFor(t *testing.T) {
	const uid = types.UID("1111")
	own := workloadv1alpha1.UpsyncedPVName(uid)
	sync := Presence{State: workloadv1alpha1.ResourceStateSync}
	upsync := map[string]Presence{"a": {State: workloadv1alpha1.ResourceStateUpsync}}
	for _, tc := range []struct {
		name   string
		claim  Claim
		pvName string
		pv     map[string]Presence
		want   bool
	}{
		{"upsynced for the claim by the target it is placed on", Claim{On: map[string]Presence{"a": sync}}, own, upsync, true},
		{"a claim the member made itself", Claim{On: map[string]Presence{"a": {State: workloadv1alpha1.ResourceStateUpsync}}}, own, upsync, true},
		{"upsynced by a target the claim is not placed on", Claim{On: map[string]Presence{"b": sync}}, own, upsync, false},
		{"named for another claim's UID", Claim{On: map[string]Presence{"a": sync}}, workloadv1alpha1.UpsyncedPVName("2222"), upsync, false},
		{"the claim waits for coordination there", Claim{On: map[string]Presence{"a": {State: workloadv1alpha1.ResourceStatePending}}}, own, upsync, false},
		{"the claim leaves the target", Claim{On: map[string]Presence{"a": {State: workloadv1alpha1.ResourceStateSync, Leaving: true}}}, own, upsync, false},
		{"the claim has another volume", Claim{VolumeName: "other", On: map[string]Presence{"a": sync}}, own, upsync, false},
		{"the claim names it, bound a moment ago", Claim{VolumeName: own, On: map[string]Presence{"a": sync}}, own, upsync, true},
		{"not upsynced: an admin's PV", Claim{On: map[string]Presence{"a": sync}}, "static", map[string]Presence{"a": sync}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProvisionedFor(uid, tc.claim, tc.pvName, tc.pv); got != tc.want {
				t.Errorf("ProvisionedFor = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestVolumeFor(t *testing.T) {
	const uid = types.UID("1111")
	own := workloadv1alpha1.UpsyncedPVName(uid)
	upsync := map[string]Presence{"a": {State: workloadv1alpha1.ResourceStateUpsync}}
	left := Claim{VolumeName: own, On: map[string]Presence{"b": {State: workloadv1alpha1.ResourceStateSync}}}
	for _, tc := range []struct {
		name     string
		deleting bool
		pvName   string
		want     bool
	}{
		{"a live claim that moved on: not bound to it", false, own, false},
		{"a deleted claim that moved on: still its volume", true, own, true},
		{"a deleted claim naming another claim's upsynced PV", true, workloadv1alpha1.UpsyncedPVName("2222"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := VolumeFor(uid, left, tc.deleting, tc.pvName, upsync); got != tc.want {
				t.Errorf("VolumeFor = %v, want %v", got, tc.want)
			}
		})
	}
}
