package dr

// ClassAt is the storage class that a volume of class c at the other Location has at the
// Location to: the class the pair's map pairs c with there, else c itself (nil: the default
// class, which maps to the default class of each side).
func (p Pair) ClassAt(c *string, to string) *string {
	if c == nil {
		return nil
	}
	for _, m := range p.Classes {
		switch {
		case to == p.Secondary && m.Primary == *c:
			return &m.Secondary
		case to == p.Primary && m.Secondary == *c:
			return &m.Primary
		}
	}
	return c
}

// mapped is the volume's storage-class annotation: the class it has where it runs, when the
// pair mapped it there from the class the claim names; empty when it has that one.
func (v Volume) mapped() string {
	if v.StorageClass == nil || sameClass(v.StorageClass, v.NamedClass) {
		return ""
	}
	return *v.StorageClass
}

// classAnnotation is the storage-class annotation a volume restored at the Location to
// carries: the class its own maps to there, or empty where that is the class the claim
// names.
func (o Observation) classAnnotation(v Volume, to string) string {
	c := o.Pair.ClassAt(v.StorageClass, to)
	if c == nil || sameClass(c, v.NamedClass) {
		return ""
	}
	return *c
}

// sameClass tells whether two classes are the same, nil being the default class.
func sameClass(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
