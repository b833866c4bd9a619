package packedcache

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// The encoding of a value: a tag byte, then, for a string, a number stored as text, a list
// or a map, its length as a uvarint, and its bytes or its items (a map's as key and value,
// the key a string without its tag). An int64 is a varint and a float64 its 8 bytes. A
// string's uvarint is twice its length, or twice its number plus one when it is a word
// (words), which then stands in for its bytes.
const (
	tagNull   = 'n'
	tagFalse  = 'f'
	tagTrue   = 't'
	tagString = 's'
	tagInt    = 'i'
	tagFloat  = 'd'
	tagNumber = 'N'
	tagList   = 'l'
	tagMap    = 'm'
)

// encode appends the encoding of v, a value of decoded JSON as unstructured objects hold it
// (the types runtime.DeepCopyJSONValue copies), to buf. A string is packed as a word when
// word is true, and so is every string value of a map.
func encode(buf []byte, v any, word bool) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, tagNull), nil
	case bool:
		if v {
			return append(buf, tagTrue), nil
		}
		return append(buf, tagFalse), nil
	case string:
		return appendString(append(buf, tagString), v, word), nil
	case int64:
		return binary.AppendVarint(append(buf, tagInt), v), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v)), nil
	case json.Number:
		return appendString(append(buf, tagNumber), string(v), false), nil
	case []any:
		buf = binary.AppendUvarint(append(buf, tagList), uint64(len(v)))
		for _, item := range v {
			_, isString := item.(string)
			var err error
			if buf, err = encode(buf, item, word || isString); err != nil {
				return nil, err
			}
		}
		return buf, nil
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, tagMap), uint64(len(v)))
		for k, item := range v {
			var err error
			if buf, err = encode(appendString(buf, k, true), item, word || wordValued[k]); err != nil {
				return nil, err
			}
		}
		return buf, nil
	}
	return nil, fmt.Errorf("cannot pack a value of type %T", v)
}

// appendString appends s, as a word if word is true and words have room for it.
func appendString(buf []byte, s string, word bool) []byte {
	if word {
		if n, ok := wordNumber(s); ok {
			return binary.AppendUvarint(buf, uint64(n)<<1|1)
		}
	}
	return append(binary.AppendUvarint(buf, uint64(len(s))<<1), s...)
}

// decoder reads values back from an encoding held as a string: the strings it returns share
// its bytes.
type decoder struct {
	data string
	at   int
}

// value decodes the next value.
func (d *decoder) value() (any, error) {
	if d.at >= len(d.data) {
		return nil, errTruncated
	}
	tag := d.data[d.at]
	d.at++
	switch tag {
	case tagNull:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagString:
		return d.string()
	case tagNumber:
		s, err := d.string()
		return json.Number(s), err
	case tagInt:
		u, err := d.uvarint()
		// As binary.Varint reads what binary.AppendVarint wrote.
		v := int64(u >> 1)
		if u&1 != 0 {
			v = ^v
		}
		return v, err
	case tagFloat:
		if d.at+8 > len(d.data) {
			return nil, errTruncated
		}
		var bits uint64
		for i := range 8 {
			bits |= uint64(d.data[d.at+i]) << (8 * i)
		}
		d.at += 8
		return math.Float64frombits(bits), nil
	case tagList:
		n, err := d.length()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = d.value(); err != nil {
				return nil, err
			}
		}
		return out, nil
	case tagMap:
		n, err := d.length()
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, n)
		if err := d.entries(n, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("packed value: unknown tag %q at %d", tag, d.at-1)
}

// entries decodes n map entries into out.
func (d *decoder) entries(n int, out map[string]any) error {
	for range n {
		k, err := d.string()
		if err != nil {
			return err
		}
		if out[k], err = d.value(); err != nil {
			return err
		}
	}
	return nil
}

// uvarint reads a uvarint, as binary.Uvarint does from bytes.
func (d *decoder) uvarint() (uint64, error) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		if d.at >= len(d.data) {
			return 0, errTruncated
		}
		b := d.data[d.at]
		d.at++
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errOverflow
}

// length reads a length, which the data left must be able to hold: each item takes a byte
// at least.
func (d *decoder) length() (int, error) {
	v, err := d.uvarint()
	if err != nil {
		return 0, err
	}
	if v > uint64(len(d.data)-d.at) {
		return 0, errTruncated
	}
	return int(v), nil
}

func (d *decoder) string() (string, error) {
	v, err := d.uvarint()
	if err != nil {
		return "", err
	}
	n := v >> 1
	if v&1 != 0 {
		s, ok := word(n)
		if !ok {
			return "", fmt.Errorf("packed value: no word %d at %d", n, d.at)
		}
		return s, nil
	}
	if n > uint64(len(d.data)-d.at) {
		return "", errTruncated
	}
	s := d.data[d.at : d.at+int(n)]
	d.at += int(n)
	return s, nil
}

var (
	errTruncated = errors.New("packed value: truncated")
	errOverflow  = errors.New("packed value: a varint overflows 64 bits")
)

// skip moves past the next value without decoding it.
func (d *decoder) skip() error {
	if d.at >= len(d.data) {
		return errTruncated
	}
	tag := d.data[d.at]
	d.at++
	switch tag {
	case tagNull, tagFalse, tagTrue:
		return nil
	case tagString, tagNumber:
		_, err := d.string()
		return err
	case tagInt:
		_, err := d.uvarint()
		return err
	case tagFloat:
		if d.at+8 > len(d.data) {
			return errTruncated
		}
		d.at += 8
		return nil
	case tagList, tagMap:
		n, err := d.length()
		for range n {
			if err != nil {
				return err
			}
			if tag == tagMap {
				if _, err = d.string(); err != nil {
					return err
				}
			}
			err = d.skip()
		}
		return err
	}
	return fmt.Errorf("packed value: unknown tag %q at %d", tag, d.at-1)
}

// lookup finds, in the encoding of a map, the value at path, a key in each map down to it,
// without decoding anything else; the decoder it returns reads that value.
func lookup(data string, path ...string) (decoder, bool) {
	d := decoder{data: data}
	for _, key := range path {
		if d.at >= len(d.data) || d.data[d.at] != tagMap {
			return d, false
		}
		d.at++
		n, err := d.length()
		if err != nil {
			return d, false
		}
		found := false
		for range n {
			k, err := d.string()
			if err != nil {
				return d, false
			}
			if k == key {
				found = true
				break
			}
			if err := d.skip(); err != nil {
				return d, false
			}
		}
		if !found {
			return d, false
		}
	}
	return d, true
}

// lookupString is the string at path in the encoding of a map; ok is false when there is
// none, and s is "" when the value there is not a string.
func lookupString(data string, path ...string) (s string, ok bool) {
	d, ok := lookup(data, path...)
	if !ok {
		return "", false
	}
	if d.at < len(d.data) && d.data[d.at] == tagString {
		d.at++
		s, _ = d.string()
	}
	return s, true
}
