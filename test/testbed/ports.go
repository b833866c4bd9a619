package testbed

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
)

// Ports below the kernel's ephemeral range (32768 and up on Linux) are taken only by those
// who ask for them by number. A port picked from the ephemeral range and let go, as by
// listening on port 0, may be taken before it is used again: by an API server or etcd of a
// bed, which listen on port 0, or as the local port of any outgoing connection.
const (
	lowestPort    = 20000
	ephemeralPort = 32768
)

// FreeAddr is an address on 127.0.0.1 that nothing listens on, for a server a test starts
// later: its port lies below the ephemeral range, where no bed and no connection takes it
// meanwhile. Servers started at once by tests that run in parallel may still draw the same
// one, one time in twelve thousand.
func FreeAddr() (string, error) {
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", lowestPort+rand.IntN(ephemeralPort-lowestPort))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		return addr, l.Close()
	}
	return "", errors.New("no free port on 127.0.0.1 below the ephemeral range after 100 tries")
}
