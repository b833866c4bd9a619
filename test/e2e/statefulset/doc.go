// Package statefulset is the end-to-end suite of StatefulSets and of claims that name no
// storage class, on the test bed: one Location of two members over one simulated storage
// domain, with the whole of Custody running. It checks that the hub makes a set's claims,
// that a member's StatefulSet controller uses them and makes none of its own, that each
// ordinal keeps its own volume and data when the set moves, that scaling and deleting follow
// the set's persistentVolumeClaimRetentionPolicy with each volume released at most once, and
// that a claim a member made itself is adopted. The simulated storage is the oracle.
package statefulset
