// Package enqueue maps events to reconcile requests in the ways several controllers share.
package enqueue
