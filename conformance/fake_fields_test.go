package conformance

import "strings"

// The fake's fields query parameter (§4.1): dotted paths select nested
// keys. The fake serves no logs, so it needs no :excerpt.

// pickFields applies a fields spec to a response body.
func pickFields(v any, spec string) any {
	var paths [][]string
	for _, tok := range strings.Split(spec, ",") {
		if tok = strings.TrimSpace(tok); tok != "" {
			paths = append(paths, strings.Split(tok, "."))
		}
	}
	var prune func(v any, paths [][]string) any
	prune = func(v any, paths [][]string) any {
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = prune(x[i], paths)
			}
			return x
		case map[string]any:
			out := map[string]any{}
			sub := map[string][][]string{}
			for _, p := range paths {
				if val, ok := x[p[0]]; ok && len(p) == 1 {
					out[p[0]] = val
				} else if ok {
					sub[p[0]] = append(sub[p[0]], p[1:])
				}
			}
			for k, ps := range sub {
				if _, whole := out[k]; !whole {
					out[k] = prune(x[k], ps)
				}
			}
			return out
		}
		return v
	}
	return prune(v, paths)
}
