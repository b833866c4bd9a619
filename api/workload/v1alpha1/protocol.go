package v1alpha1

import (
	"crypto/sha256"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// The protocol on hub objects. For each target key <t>:
//
//	state.workload.custody.dev/<t>              label       "" placed, waiting for coordination;
//	                                                        Sync: the hub is the source;
//	                                                        Upsync: <t> is the source (exclusive)
//	finalizers.workload.custody.dev/<t>         annotation  coordination finalizers holding back
//	                                                        removal from <t>
//	deletion.internal.workload.custody.dev/<t>  annotation  RFC 3339 time removal was requested
//	workload.custody.dev/syncer-<t>             finalizer   the syncer's hold until the
//	                                                        downstream copy is gone
const (
	StateLabelPrefix           = "state.workload.custody.dev/"
	FinalizersAnnotationPrefix = "finalizers.workload.custody.dev/"
	DeletionAnnotationPrefix   = "deletion.internal.workload.custody.dev/"
	SyncerFinalizerPrefix      = "workload.custody.dev/syncer-"
)

// ResourceState is the value of a state label.
type ResourceState string

const (
	// ResourceStatePending: placed on the target, waiting for coordination to decide.
	ResourceStatePending ResourceState = ""
	// ResourceStateSync: the hub is the source; the target's syncer keeps the target in line.
	ResourceStateSync ResourceState = "Sync"
	// ResourceStateUpsync: the target is the source; exclusive.
	ResourceStateUpsync ResourceState = "Upsync"
)

// StateLabel is the state label key for a target key.
func StateLabel(key string) string { return StateLabelPrefix + key }

// FinalizersAnnotation is the coordination finalizers annotation key for a target key.
func FinalizersAnnotation(key string) string { return FinalizersAnnotationPrefix + key }

// DeletionAnnotation is the removal-requested annotation key for a target key.
func DeletionAnnotation(key string) string { return DeletionAnnotationPrefix + key }

// DeletionRequested is the value of a deletion annotation written at t.
func DeletionRequested(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// SyncerFinalizer is the syncer's finalizer for a target key.
func SyncerFinalizer(key string) string { return SyncerFinalizerPrefix + key }

// maxKeyLength keeps SyncerFinalizer's name part ("syncer-<key>") within 63 characters.
const maxKeyLength = 56

var readableKey = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ToSyncTargetKey derives the target key from a SyncTarget's name: the name itself when it
// is short and has no dots, so that labels stay readable, else a prefix of it and a hash of
// the whole name. The same name always gives the same key.
func ToSyncTargetKey(name string) string {
	if len(name) <= maxKeyLength && readableKey.MatchString(name) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := new(big.Int).SetBytes(sum[:]).Text(36)[:12]
	prefix := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(name)), "-")
	if len(prefix) > maxKeyLength-len(hash)-1 {
		prefix = strings.TrimRight(prefix[:maxKeyLength-len(hash)-1], "-")
	}
	if prefix == "" {
		return hash
	}
	return prefix + "-" + hash
}
