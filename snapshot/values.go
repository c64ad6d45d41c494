package snapshot

import (
	"fmt"
	"math/big"
)

// dictSet sets k to v in d with Python semantics for string keys. Past 64
// items it appends without looking for an earlier equal key (so that a
// hostile dict cannot make decoding quadratic); snapshots never have that
// many unknown keys.
func dictSet(d Dict, k, v Value) Dict {
	if ks, ok := k.(string); ok && len(d) <= 64 {
		for i := range d {
			if s, ok := d[i].Key.(string); ok && s == ks {
				d[i].Value = v
				return d
			}
		}
	}
	return append(d, DictItem{Key: k, Value: v})
}

// typeName names the Python type of a generic Value, for errors.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "bool"
	case int, int64, *big.Int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []byte:
		return "bytes"
	case List:
		return "list"
	case Tuple:
		return "tuple"
	case Dict:
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}
