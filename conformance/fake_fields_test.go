package conformance

import (
	"strconv"
	"strings"
)

// The fake's fields query parameter (§4.1).

// pickFields applies a fields spec (§4.1) to a response body: dotted paths
// select nested keys, :excerpt(max[,ellipsis]) cuts a string. bug reports
// which of the fields bugs are turned on.
func pickFields(v any, spec string, bug func(string) bool) any {
	type fieldSpec struct {
		path []string
		mod  string
	}
	var specs []fieldSpec
	depth, start := 0, 0
	for i := 0; i <= len(spec); i++ {
		if i < len(spec) && spec[i] == '(' {
			depth++
		} else if i < len(spec) && spec[i] == ')' {
			depth--
		} else if i == len(spec) || (spec[i] == ',' && depth == 0) {
			tok := strings.TrimSpace(spec[start:i])
			start = i + 1
			if tok == "" {
				continue
			}
			path, mod, _ := strings.Cut(tok, ":")
			if bug("fields-no-nesting") {
				path, _, _ = strings.Cut(path, ".")
			}
			specs = append(specs, fieldSpec{path: strings.Split(path, "."), mod: mod})
		}
	}
	var prune func(v any, specs []fieldSpec) any
	prune = func(v any, specs []fieldSpec) any {
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = prune(x[i], specs)
			}
			return x
		case map[string]any:
			out := map[string]any{}
			for _, s := range specs {
				if s.path[0] == "*" && !bug("fields-no-star") { // §4.1: every key at this depth
					for k, v := range x {
						if len(s.path) > 1 {
							v = prune(v, []fieldSpec{{path: s.path[1:], mod: s.mod}})
						}
						out[k] = v
					}
					continue
				}
				val, ok := x[s.path[0]]
				if !ok {
					continue
				}
				if len(s.path) > 1 {
					sub := prune(val, []fieldSpec{{path: s.path[1:], mod: s.mod}})
					if prev, ok := out[s.path[0]].(map[string]any); ok {
						for k, v := range sub.(map[string]any) {
							prev[k] = v
						}
					} else {
						out[s.path[0]] = sub
					}
					continue
				}
				if str, ok := val.(string); ok && strings.HasPrefix(s.mod, "excerpt(") {
					args := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s.mod, "excerpt("), ")"), ",")
					n, _ := strconv.Atoi(strings.TrimSpace(args[0]))
					ellipsis := len(args) > 1 && strings.TrimSpace(args[1]) == "true" && !bug("no-ellipsis") ||
						bug("excerpt-always-ellipsis")
					val = excerpt(str, n, ellipsis)
					if bug("document-readings") && len([]rune(str)) > n { // §4.1: a short plain-text version
						val = string([]rune(str)[:n])
						if ellipsis {
							val = val.(string) + "…"
						}
					}
				}
				out[s.path[0]] = val
			}
			return out
		}
		return v
	}
	if m, ok := v.(map[string]any); ok {
		if items, ok := m["items"]; ok && !bug("fields-drop-envelope") {
			m["items"] = prune(items, specs)
			return m
		}
	}
	return prune(v, specs)
}
