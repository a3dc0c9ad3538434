// Command render is a small, offline stand-in for `helm template`, limited to
// what the wasd chart uses. No helm binary can be installed on the build
// machines, so the chart tests render with this program instead.
//
// It uses the same engine Helm uses: Go's text/template with the sprig
// function library (Debian package golang-github-masterminds-sprig-dev), plus
// Helm's own additions that the chart needs: include, tpl, required, toYaml,
// fromYaml, fromJson, fromJsonArray, toJson (sprig), lookup (always an empty map, as in
// `helm template`). Values are loaded like Helm loads them (YAML converted
// through JSON, so numbers are float64), user values are merged over the
// chart's values.yaml (maps merge, a null deletes a key), and --set accepts
// dotted keys with `\.` escapes and scalar type inference.
//
// .Files.Get reads a file of the chart directory (as Helm's does, "" when
// missing; the chart ships charts/wasd/dashboards/wasd.json that way).
//
// Not supported (the chart does not use them): subcharts, other .Files methods, CRDs,
// values.schema.json enforcement (the Python tests do that), --set-file, list
// indexes in --set.
//
// Build offline (GOPATH mode over the Debian Go sources):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o render .
//
// Usage:
//
//	render [--name RELEASE] [--namespace NS] [-f values.yaml]... [--set a.b=c]...
//	       [--set-string a.b=c]... [--kube-version v1.34.0] [--api-versions g/v]...
//	       [--notes] CHART_DIR
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v2"
)

// chartFiles is .Files: Get(path) is the file's text, "" when it cannot be read.
type chartFiles struct{ dir string }

func (f chartFiles) Get(name string) string {
	b, err := os.ReadFile(filepath.Join(f.dir, filepath.FromSlash(name)))
	if err != nil {
		return ""
	}
	return string(b)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// chartMeta holds the Chart.yaml fields the templates may read as .Chart.X.
type chartMeta struct {
	APIVersion  string   `yaml:"apiVersion"`
	Name        string   `yaml:"name"`
	Version     string   `yaml:"version"`
	AppVersion  string   `yaml:"appVersion"`
	Description string   `yaml:"description"`
	Type        string   `yaml:"type"`
	KubeVersion string   `yaml:"kubeVersion"`
	Keywords    []string `yaml:"keywords"`
	Home        string   `yaml:"home"`
}

type kubeVersion struct {
	Version, Major, Minor, GitVersion string
}

func (k kubeVersion) String() string { return k.Version }

type apiVersions []string

// Has reports whether a group/version (or group/version/Kind) is served,
// like Helm's .Capabilities.APIVersions.Has.
func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

type capabilities struct {
	KubeVersion kubeVersion
	APIVersions apiVersions
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "render: "+err.Error())
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	name := fs.String("name", "wasd", "release name")
	namespace := fs.String("namespace", "wasd-system", "release namespace")
	kubeVer := fs.String("kube-version", "v1.34.0", "Kubernetes version for .Capabilities")
	showNotes := fs.Bool("notes", false, "print the rendered NOTES.txt instead of the manifests")
	var valueFiles, sets, setStrings, apis multiFlag
	fs.Var(&valueFiles, "f", "values file (repeatable)")
	fs.Var(&sets, "set", "key=value (repeatable, comma-separated pairs)")
	fs.Var(&setStrings, "set-string", "key=value, value kept as a string")
	fs.Var(&apis, "api-versions", "extra served group/version (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("exactly one chart directory expected")
	}
	chartDir := fs.Arg(0)

	var meta chartMeta
	if err := readYAMLInto(filepath.Join(chartDir, "Chart.yaml"), &meta); err != nil {
		return err
	}
	values, err := readValues(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		return err
	}
	for _, f := range valueFiles {
		override, err := readValues(f)
		if err != nil {
			return err
		}
		values = coalesce(override, values)
	}
	for _, s := range sets {
		if err := applySet(values, s, false); err != nil {
			return err
		}
	}
	for _, s := range setStrings {
		if err := applySet(values, s, true); err != nil {
			return err
		}
	}

	major, minor := splitVersion(*kubeVer)
	caps := capabilities{
		KubeVersion: kubeVersion{Version: *kubeVer, Major: major, Minor: minor, GitVersion: *kubeVer},
		APIVersions: append(apiVersions{"v1", "apps/v1", "batch/v1", "policy/v1",
			"rbac.authorization.k8s.io/v1", "admissionregistration.k8s.io/v1",
			"coordination.k8s.io/v1", "scheduling.k8s.io/v1"}, apis...),
	}
	top := map[string]interface{}{
		"Values": values,
		"Release": map[string]interface{}{
			"Name": *name, "Namespace": *namespace, "Service": "Helm",
			"IsInstall": true, "IsUpgrade": false, "Revision": 1,
		},
		"Chart":        meta,
		"Capabilities": caps,
		"Files":        chartFiles{dir: chartDir},
	}
	out, notes, err := renderChart(chartDir, meta.Name, top)
	if err != nil {
		return err
	}
	if *showNotes {
		out = notes
	}
	_, err = os.Stdout.WriteString(out)
	return err
}

// renderChart parses every template of the chart into one set (so that
// include/define work across files) and executes the non-partial ones in
// name order, joining them as a YAML stream with Helm's "# Source:" lines.
// NOTES.txt is rendered too and returned on its own.
func renderChart(chartDir, chartName string, top map[string]interface{}) (string, string, error) {
	files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil {
		return "", "", err
	}
	sort.Strings(files)
	root := template.New("chart")
	root.Option("missingkey=zero")
	funcs := funcMap(root)
	root.Funcs(funcs)
	var names []string
	for _, f := range files {
		base := filepath.Base(f)
		if !(strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml") ||
			strings.HasSuffix(base, ".tpl") || base == "NOTES.txt") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			return "", "", err
		}
		tname := chartName + "/templates/" + base
		if _, err := root.New(tname).Parse(string(data)); err != nil {
			return "", "", err
		}
		if !strings.HasPrefix(base, "_") {
			names = append(names, tname)
		}
	}
	var out strings.Builder
	var notes string
	for _, tname := range names {
		scope := copyMap(top)
		scope["Template"] = map[string]interface{}{"Name": tname, "BasePath": chartName + "/templates"}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, tname, scope); err != nil {
			return "", "", err
		}
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.HasSuffix(tname, "/NOTES.txt") {
			notes = text
			continue
		}
		for _, doc := range splitDocuments(text) {
			fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", tname, doc)
		}
	}
	return out.String(), notes, nil
}

// splitDocuments cuts a rendered file at "---" lines and drops documents
// that hold only whitespace and comments.
func splitDocuments(text string) []string {
	var docs []string
	var cur []string
	flush := func() {
		body := strings.TrimRight(strings.Join(cur, "\n"), " \n")
		keep := false
		for _, l := range strings.Split(body, "\n") {
			t := strings.TrimSpace(l)
			if t != "" && !strings.HasPrefix(t, "#") {
				keep = true
				break
			}
		}
		if keep {
			docs = append(docs, strings.TrimLeft(body, "\n"))
		}
		cur = nil
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " ") == "---" {
			flush()
			continue
		}
		cur = append(cur, l)
	}
	flush()
	return docs
}

func funcMap(root *template.Template) template.FuncMap {
	f := sprig.TxtFuncMap()
	// Helm removes these two for safety; so do we.
	delete(f, "env")
	delete(f, "expandenv")
	f["toYaml"] = func(v interface{}) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return strings.TrimSuffix(string(b), "\n")
	}
	f["fromYaml"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	// Helm's JSON readers; on malformed input they return the error text
	// under "Error" (maps) or as the only element (arrays), as Helm does.
	f["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	f["fromJsonArray"] = func(s string) []interface{} {
		var a []interface{}
		if err := json.Unmarshal([]byte(s), &a); err != nil {
			return []interface{}{err.Error()}
		}
		return a
	}
	f["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil {
			return nil, errors.New(msg)
		}
		if s, ok := v.(string); ok && s == "" {
			return nil, errors.New(msg)
		}
		return v, nil
	}
	f["lookup"] = func(apiVersion, kind, namespace, name string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	// Bounded recursion, as Helm does, so a self-including template fails
	// instead of exhausting the stack.
	const kMaxIncludeDepth = 1000
	depth := 0
	f["include"] = func(name string, data interface{}) (string, error) {
		depth++
		defer func() { depth-- }()
		if depth > kMaxIncludeDepth {
			return "", fmt.Errorf("include of %q nested too deeply", name)
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	f["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	return f
}

func readYAMLInto(path string, v interface{}) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return yaml.Unmarshal(data, v)
}

// readValues loads a values file the way Helm does: YAML, then through JSON,
// so maps are map[string]interface{} and numbers float64.
func readValues(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw interface{}
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	j, err := json.Marshal(jsonable(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := map[string]interface{}{}
	if string(j) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(j, &out); err != nil {
		return nil, fmt.Errorf("%s: top level must be a map: %w", path, err)
	}
	return out, nil
}

// jsonable turns yaml.v2's map[interface{}]interface{} into string-keyed maps.
func jsonable(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, val := range t {
			m[fmt.Sprint(k)] = jsonable(val)
		}
		return m
	case []interface{}:
		for i := range t {
			t[i] = jsonable(t[i])
		}
		return t
	}
	return v
}

// coalesce merges user values over defaults: maps merge key by key, any
// other type replaces, and a null user value deletes the key.
func coalesce(user, defaults map[string]interface{}) map[string]interface{} {
	out := copyMap(defaults)
	for k, uv := range user {
		if uv == nil {
			delete(out, k)
			continue
		}
		um, uIsMap := uv.(map[string]interface{})
		dm, dIsMap := out[k].(map[string]interface{})
		if uIsMap && dIsMap {
			out[k] = coalesce(um, dm)
		} else {
			out[k] = uv
		}
	}
	return out
}

func copyMap(m map[string]interface{}) map[string]interface{} {
	out := make(map[string]interface{}, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// applySet handles one --set argument: comma-separated key=value pairs,
// dotted keys (`\.` keeps a dot inside a key, `\,` a comma inside a value).
func applySet(values map[string]interface{}, arg string, asString bool) error {
	for _, pair := range splitUnescaped(arg, ',') {
		eq := strings.IndexByte(pair, '=')
		if eq <= 0 {
			return fmt.Errorf("--set %q: expected key=value", pair)
		}
		keys := splitUnescaped(pair[:eq], '.')
		raw := strings.ReplaceAll(pair[eq+1:], `\,`, ",")
		var val interface{} = raw
		if !asString {
			val = inferScalar(raw)
		}
		cur := values
		for i, k := range keys {
			k = strings.ReplaceAll(k, `\.`, ".")
			if i == len(keys)-1 {
				if val == nil {
					delete(cur, k)
				} else {
					cur[k] = val
				}
				break
			}
			next, ok := cur[k].(map[string]interface{})
			if !ok {
				next = map[string]interface{}{}
			} else {
				next = copyMap(next)
			}
			cur[k] = next
			cur = next
		}
	}
	return nil
}

func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// inferScalar types a --set value like Helm's strvals: booleans, null,
// integers (int64); everything else stays a string.
func inferScalar(s string) interface{} {
	switch s {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && (s == "0" || !strings.HasPrefix(s, "0")) {
		return n
	}
	return s
}

func splitVersion(v string) (string, string) {
	parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)
	if len(parts) < 2 {
		return parts[0], "0"
	}
	return parts[0], parts[1]
}
