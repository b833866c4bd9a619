package fencing

import (
	"fmt"
	"slices"
)

// The clean report is what lifts a Fence: a target back from a Fence of a storage domain is
// unfenced only once its syncer reported that the member holds nothing of that domain the
// hub no longer gives it. So which domains a member's leftover claim or volume counts against
// is a decision about fencing, made here; the syncer only reads the member and writes the
// report. It errs one way only: an object the report cannot place in exactly one domain
// counts against every domain the report covers, as the storage it lives in is unknown, and
// lifting the Fence of that storage would hand a member a volume it should not hold.

// Class is what the clean report reads of one of the member's StorageClasses.
type Class struct {
	// Provisioner is the class's provisioner.
	Provisioner string
	// Domain is the storage domain its annotation names; "" when it names none.
	Domain string
}

// Held is a claim or PV in the member, made or upsynced by its syncer, that the hub no
// longer gives the target.
type Held struct {
	// Name names it in the report.
	Name string
	// Class is its spec.storageClassName; "" when it names none.
	Class string
	// Provisioner is the driver that made its volume, where the object says so (a PV's CSI
	// driver, a claim's storage-provisioner annotation); "" when it does not.
	Provisioner string
	// Domain is the storage domain the object names itself (its own domain annotation); ""
	// when it names none.
	Domain string
}

// Unclean returns, for each storage domain the clean report covers, the names of the held
// objects that keep the member from clean in it, sorted; a domain with none is clean. The
// report covers the target's own domains (its SyncTarget's spec) and those the member's
// classes name.
func Unclean(targetDomains []string, classes map[string]Class, held []Held) map[string][]string {
	out := map[string][]string{}
	for _, d := range targetDomains {
		out[d] = nil
	}
	for _, c := range classes {
		if c.Domain != "" {
			out[c.Domain] = nil
		}
	}
	for _, h := range held {
		domain, why := DomainOf(h, classes, targetDomains)
		name := h.Name
		if why != "" {
			name = fmt.Sprintf("%s (%s)", h.Name, why)
		}
		for d := range out {
			if domain == "" || d == domain {
				out[d] = append(out[d], name)
			}
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// DomainOf returns the one storage domain a held object lives in, or "" and why it cannot be
// told, in which case it counts against every domain. Its class must exist, name a domain the
// target reaches and, where the object names them, the object's own provisioner and domain:
// a class missing or without a domain annotation (also an internal class, which looks the
// same as a network class that lost its annotation), replaced by one of another provisioner,
// or re-annotated to a domain the object does not name, says nothing certain of where the
// volume is.
func DomainOf(h Held, classes map[string]Class, targetDomains []string) (domain, why string) {
	if h.Class == "" {
		return "", "it names no storage class"
	}
	c, ok := classes[h.Class]
	switch {
	case !ok:
		return "", fmt.Sprintf("its storage class %s does not exist", h.Class)
	case c.Domain == "":
		return "", fmt.Sprintf("its storage class %s names no storage domain", h.Class)
	case !slices.Contains(targetDomains, c.Domain):
		return "", fmt.Sprintf("its storage class %s names storage domain %s, which the target does not reach", h.Class, c.Domain)
	case h.Provisioner != "" && h.Provisioner != c.Provisioner:
		return "", fmt.Sprintf("its provisioner %s is not its storage class %s's, %s", h.Provisioner, h.Class, c.Provisioner)
	case h.Domain != "" && h.Domain != c.Domain:
		return "", fmt.Sprintf("it names storage domain %s, its storage class %s names %s", h.Domain, h.Class, c.Domain)
	}
	return c.Domain, ""
}
