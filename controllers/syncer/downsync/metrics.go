package downsync

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// DownstreamWrites counts the writes the syncer makes to members, by target key, kind and
// operation (apply, create, patch or delete). A syncer that has caught up writes nothing until something
// changes, so a growing count with nothing changing upstream is a syncer fighting a member.
var DownstreamWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "custody_syncer_downstream_writes_total",
	Help: "Writes of the syncer to its member, by target key, kind and operation.",
}, []string{"sync_target", "kind", "operation"})

func init() {
	metrics.Registry.MustRegister(DownstreamWrites)
}
