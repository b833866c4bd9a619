package packedcache

import (
	"strings"
	"sync"
)

// maxWords bounds the words a process keeps: past it, a string is packed as it is.
const maxWords = 1 << 14

// words are the strings that many packed objects hold, each kept once in the process and
// packed as its number: the keys of every map (the fields of a kind, and the keys of labels
// and annotations) and the values of the fields that few values fill (wordValued). Of a
// claim or a PV, they are more than half the bytes.
//
// A word is only added, never changed: a number packed once reads the same word for as long
// as the process runs. A decoder reads words without the lock: it reads a number that an
// encoder wrote after the word it stands for, and the informer's store, under its own lock,
// lies between the two.
var words struct {
	sync.Mutex
	number map[string]uint32
	list   [maxWords]string
}

// wordNumber is s's number as a word, added when there is room; ok is false when s is not
// one. The empty string is never a word.
func wordNumber(s string) (n uint32, ok bool) {
	if s == "" {
		return 0, false
	}
	words.Lock()
	defer words.Unlock()
	if n, ok := words.number[s]; ok {
		return n, true
	}
	if len(words.number) == maxWords {
		return 0, false
	}
	if words.number == nil {
		words.number = map[string]uint32{}
	}
	n = uint32(len(words.number))
	// The object's bytes would otherwise stay held by the word.
	words.list[n] = strings.Clone(s)
	words.number[words.list[n]] = n
	return n, true
}

// word is the word numbered n; ok is false when there is none.
func word(n uint64) (string, bool) {
	if n >= maxWords {
		return "", false
	}
	s := words.list[n]
	return s, s != ""
}

// wordValued are the fields whose values are words: few values fill them across objects,
// unlike names, UIDs, versions and times. Of a map among them (labels), every value is a
// word; the strings of a list are words too (finalizers, access modes).
var wordValued = map[string]bool{
	"apiVersion": true, "kind": true, "namespace": true, "labels": true,
	"storageClassName": true, "volumeMode": true, "persistentVolumeReclaimPolicy": true,
	"phase": true, "driver": true, "fsType": true, "type": true, "reason": true, "message": true,
}
