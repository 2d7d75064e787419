package riverui_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/schedule"
)

// This file checks openapi.json against the handler: the routes it
// documents are the routes served, the bodies the routes read have the
// fields documented, and every answer the tests of this package receive
// from /api/ validates against the document (fixture.do calls
// checkAnswer). The validator is a small one for the part of JSON Schema
// the document uses; a keyword it does not know fails the test, so the
// document cannot outgrow the check silently.

// openAPI is openapi.json, parsed once.
var openAPI = sync.OnceValues(func() (*apiDoc, error) {
	data, err := os.ReadFile("openapi.json")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	return &apiDoc{root: root, raw: data}, nil
})

func loadOpenAPI(t *testing.T) *apiDoc {
	t.Helper()
	doc, err := openAPI()
	require.NoError(t, err)
	return doc
}

type apiDoc struct {
	root map[string]any
	raw  []byte
}

// operations lists the document's operations as "METHOD /path".
func (d *apiDoc) operations() []string {
	var out []string
	for path, item := range d.root["paths"].(map[string]any) {
		for method := range item.(map[string]any) {
			if method != "parameters" {
				out = append(out, strings.ToUpper(method)+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// operation finds the operation of a request path such as
// /api/runs/0190…/cancel, and the template it matched. As the router
// does, a literal path (/api/runs/bulk) comes before a template that
// matches it too (/api/runs/{id}), for the methods it lists.
func (d *apiDoc) operation(method, path string) (map[string]any, string) {
	paths := d.root["paths"].(map[string]any)
	if item, ok := paths[path]; ok {
		if op, ok := item.(map[string]any)[strings.ToLower(method)].(map[string]any); ok {
			return op, path
		}
	}
	var matched string
	for tmpl, item := range paths {
		if tmpl == path {
			continue
		}
		re := "^" + regexp.MustCompile(`\\\{[a-z_]+\\\}`).ReplaceAllString(regexp.QuoteMeta(tmpl), `[^/]+`) + "$"
		if regexp.MustCompile(re).MatchString(path) {
			if op, ok := item.(map[string]any)[strings.ToLower(method)].(map[string]any); ok {
				return op, tmpl
			}
			matched = tmpl
		}
	}
	if _, ok := paths[path]; ok {
		matched = path
	}
	return nil, matched
}

// resolve follows a "#/…" JSON pointer.
func (d *apiDoc) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q is not local", ref)
	}
	var node any = d.root
	for _, part := range strings.Split(ref[2:], "/") {
		obj, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not in an object", ref, part)
		}
		if node, ok = obj[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]; !ok {
			return nil, fmt.Errorf("$ref %q: no %q", ref, part)
		}
	}
	return node, nil
}

// deref resolves n while it is a {"$ref": …}; siblings of a $ref may only
// be annotations.
func (d *apiDoc) deref(n map[string]any) (map[string]any, error) {
	for {
		ref, ok := n["$ref"].(string)
		if !ok {
			return n, nil
		}
		for k := range n {
			if k != "$ref" && !annotations[k] {
				return nil, fmt.Errorf("keyword %q beside $ref %q", k, ref)
			}
		}
		target, err := d.resolve(ref)
		if err != nil {
			return nil, err
		}
		if n, ok = target.(map[string]any); !ok {
			return nil, fmt.Errorf("$ref %q is not an object", ref)
		}
	}
}

var annotations = map[string]bool{"description": true, "examples": true, "readOnly": true, "writeOnly": true, "deprecated": true, "title": true, "default": true}

// validate checks v (decoded with UseNumber) against schema.
func (d *apiDoc) validate(schema any, v any, at string) error {
	s, ok := schema.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: schema is %T, not an object", at, schema)
	}
	s, err := d.deref(s)
	if err != nil {
		return fmt.Errorf("%s: %w", at, err)
	}
	for k := range s {
		switch k {
		case "type", "properties", "required", "additionalProperties", "items", "enum", "format", "pattern", "anyOf", "minimum", "maximum":
		default:
			if !annotations[k] {
				return fmt.Errorf("%s: the validator does not know the keyword %q; teach it or do without", at, k)
			}
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		var errs []string
		for _, alt := range anyOf {
			err := d.validate(alt, v, at)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: matches none of anyOf: %s", at, strings.Join(errs, "; "))
		}
	}
	if typ, ok := s["type"]; ok {
		types := []any{typ}
		if list, ok := typ.([]any); ok {
			types = list
		}
		got := jsonType(v)
		if !slices.ContainsFunc(types, func(t any) bool { return t == got || (t == "number" && got == "integer") }) {
			return fmt.Errorf("%s: is %s, want %v", at, got, typ)
		}
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, enum)
	}
	if str, ok := v.(string); ok {
		if err := checkFormat(s["format"], str); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if pattern, ok := s["pattern"].(string); ok && !regexp.MustCompile(pattern).MatchString(str) {
			return fmt.Errorf("%s: %q does not match %s", at, str, pattern)
		}
	}
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		if lo, ok := s["minimum"].(json.Number); ok && f < mustFloat(lo) {
			return fmt.Errorf("%s: %v is below %v", at, n, lo)
		}
		if hi, ok := s["maximum"].(json.Number); ok && f > mustFloat(hi) {
			return fmt.Errorf("%s: %v is above %v", at, n, hi)
		}
	}
	if arr, ok := v.([]any); ok {
		if items, ok := s["items"]; ok {
			for i, item := range arr {
				if err := d.validate(items, item, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for _, name := range asStrings(s["required"]) {
			if _, ok := obj[name]; !ok {
				return fmt.Errorf("%s: required field %q is missing", at, name)
			}
		}
		for name, value := range obj {
			if sub, ok := props[name]; ok {
				if err := d.validate(sub, value, at+"."+name); err != nil {
					return err
				}
				continue
			}
			switch extra := s["additionalProperties"].(type) {
			case bool:
				if !extra {
					return fmt.Errorf("%s: field %q is not in the document", at, name)
				}
			case map[string]any:
				if err := d.validate(extra, value, at+"."+name); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func checkFormat(format any, s string) error {
	var err error
	switch format {
	case nil:
	case "date-time":
		_, err = time.Parse(time.RFC3339Nano, s)
	case "uuid":
		_, err = uuid.Parse(s)
	case "go-duration":
		_, err = time.ParseDuration(s)
	default:
		err = fmt.Errorf("the validator does not know the format %v", format)
	}
	return err
}

func mustFloat(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}

func asStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

// answerSchema is the schema of the answer of method path under status,
// nil for an answer without a body. An unknown route's answer is an Error.
func (d *apiDoc) answerSchema(method, path string, status int) (any, error) {
	op, tmpl := d.operation(method, path)
	if op == nil {
		if tmpl != "" && status != http.StatusMethodNotAllowed {
			return nil, fmt.Errorf("%s %s answered %d, but the document has no %s on %s", method, path, status, method, tmpl)
		}
		return map[string]any{"$ref": "#/components/schemas/Error"}, nil
	}
	responses := op["responses"].(map[string]any)
	resp, ok := responses[fmt.Sprint(status)]
	if !ok {
		if resp, ok = responses["default"]; !ok || status < 400 {
			return nil, fmt.Errorf("%s %s: status %d is not in the document", method, tmpl, status)
		}
	}
	r, err := d.deref(resp.(map[string]any))
	if err != nil {
		return nil, err
	}
	content, ok := r["content"].(map[string]any)
	if !ok {
		return nil, nil
	}
	media, ok := content["application/json"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s %s %d: no application/json content", method, tmpl, status)
	}
	return media["schema"], nil
}

// checkAnswer validates an answer of the API against the document. path
// is without the prefix and the query.
func checkAnswer(t *testing.T, method, path string, status int, contentType, body string) {
	t.Helper()
	doc := loadOpenAPI(t)
	schema, err := doc.answerSchema(method, path, status)
	require.NoError(t, err)
	if schema == nil {
		require.Empty(t, body, "%s %s %d: the document says no body", method, path, status)
		return
	}
	require.True(t, strings.HasPrefix(contentType, "application/json"), "%s %s %d: Content-Type %q", method, path, status, contentType)
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%s %s %d: %s", method, path, status, body)
	require.NoError(t, doc.validate(schema, v, "body"), "%s %s %d: %s", method, path, status, body)
}

// TestOpenAPIMatchesRouter: every route the handler serves is in the
// document and every operation of the document is served; each body's
// documented fields are the fields the route reads.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()

	doc := loadOpenAPI(t)
	routes := riverui.APIRoutes()
	slices.Sort(routes)
	require.Equal(t, routes, doc.operations())

	t.Run("Served", func(t *testing.T) {
		t.Parallel()
		// Each documented operation reaches a route: never the fallback's
		// "no API route" 404 nor a 405.
		f := newFixture(t, nil)
		for _, op := range doc.operations() {
			method, path, _ := strings.Cut(op, " ")
			path = strings.ReplaceAll(path, "{id}", uuid.NewString())
			status, body := f.do(t, method, path, "", nil)
			require.NotEqual(t, http.StatusMethodNotAllowed, status, "%s: %s", op, body)
			require.NotContains(t, body, "no API route", op)
		}
		// And a method the document does not list on a path is refused,
		// unless a templated path lists it and serves the path as its
		// own: GET /api/schedules/bulk is the schedule whose key is bulk.
		paths := doc.root["paths"].(map[string]any)
		for path, item := range paths {
			for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
				if _, ok := item.(map[string]any)[strings.ToLower(method)]; ok {
					continue
				}
				if servedAs(paths, path, method) {
					continue
				}
				status, body := f.do(t, method, strings.ReplaceAll(path, "{id}", uuid.NewString()), "{}", nil)
				require.Equal(t, http.StatusMethodNotAllowed, status, "%s %s: %s", method, path, body)
			}
		}
	})

	t.Run("Bodies", func(t *testing.T) {
		t.Parallel()
		for route, fields := range riverui.APIBodyFields() {
			method, path, _ := strings.Cut(route, " ")
			op, _ := doc.operation(method, path)
			require.NotNil(t, op, route)
			body, ok := op["requestBody"].(map[string]any)
			require.True(t, ok, "%s: no requestBody in the document", route)
			schemaRef := body["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
			schema, err := doc.deref(schemaRef.(map[string]any))
			require.NoError(t, err)
			require.Equal(t, false, schema["additionalProperties"], "%s: the document must refuse unknown fields as the API does", route)
			var documented []string
			for name := range schema["properties"].(map[string]any) {
				documented = append(documented, name)
			}
			slices.Sort(documented)
			require.Equal(t, fields, documented, route)
		}
		// Every operation with a requestBody reads one.
		for _, op := range doc.operations() {
			method, path, _ := strings.Cut(op, " ")
			o, _ := doc.operation(method, path)
			if _, ok := o["requestBody"]; ok {
				require.Contains(t, riverui.APIBodyFields(), op)
			}
		}
	})
}

// TestOpenAPIValidator: the validator that checks the tests' answers does
// refuse what does not fit.
func TestOpenAPIValidator(t *testing.T) {
	t.Parallel()

	doc := loadOpenAPI(t)
	good := `{"error": "bad", "field": "name"}`
	errSchema := map[string]any{"$ref": "#/components/schemas/Error"}
	decode := func(s string) any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		require.NoError(t, dec.Decode(&v))
		return v
	}
	require.NoError(t, doc.validate(errSchema, decode(good), "body"))
	for _, bad := range []string{`{}`, `{"error": 1}`, `{"error": "x", "colour": "red"}`, `[]`} {
		require.Error(t, doc.validate(errSchema, decode(bad), "body"), bad)
	}
	duration := map[string]any{"$ref": "#/components/schemas/Duration"}
	require.NoError(t, doc.validate(duration, decode(`"1h30m0s"`), "d"))
	require.Error(t, doc.validate(duration, decode(`60000000000`), "d"))
	require.Error(t, doc.validate(duration, decode(`"soon"`), "d"))
	occurrence := map[string]any{"$ref": "#/components/schemas/Occurrence"}
	require.Error(t, doc.validate(occurrence, decode(`{"at": "yesterday", "nominal": "", "shifted": false, "skipped": false, "note": ""}`), "o"))
	require.Error(t, doc.validate(map[string]any{"oneOf": []any{}}, decode(`1`), "x"), "unknown keywords fail")
}

// TestOpenAPIDSTPolicies: the DST policies the document lists are the
// ones schedule.DSTPolicy takes, and the validator refuses another.
func TestOpenAPIDSTPolicies(t *testing.T) {
	t.Parallel()

	doc := loadOpenAPI(t)
	enum := func(name string) []string {
		s, err := doc.resolve("#/components/schemas/" + name)
		require.NoError(t, err)
		return asStrings(s.(map[string]any)["enum"])
	}
	require.Equal(t, []string{"jump", "shift", "skip"}, enum("DSTGap"))
	require.Equal(t, []string{"first", "last", "both"}, enum("DSTFold"))
	for _, gap := range enum("DSTGap") {
		require.NoError(t, schedule.DSTPolicy{Gap: schedule.DSTGap(gap)}.Validate(), gap)
	}
	for _, fold := range enum("DSTFold") {
		require.NoError(t, schedule.DSTPolicy{Fold: schedule.DSTFold(fold)}.Validate(), fold)
	}
	require.Error(t, doc.validate(map[string]any{"$ref": "#/components/schemas/DSTGap"}, "later", "g"))
}

// TestOpenAPIServed: the document is served as embedded, with the prefix
// as its server under a prefix.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()

	doc := loadOpenAPI(t)
	require.Equal(t, "3.1.0", doc.root["openapi"])

	f := newFixture(t, nil)
	status, body := f.do(t, http.MethodGet, "/api/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, string(doc.raw), body)

	f = newFixture(t, &riverui.Config{Prefix: "/ops", Token: "s3cret"})
	status, body = f.do(t, http.MethodGet, "/ops/api/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, status)
	var served struct {
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
		Paths map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &served))
	require.Equal(t, "/ops", served.Servers[0].URL)
	require.Len(t, served.Paths, len(doc.root["paths"].(map[string]any)))
}

// servedAs reports whether another path of paths, with a {parameter}
// segment, lists method and matches path as its own.
func servedAs(paths map[string]any, path, method string) bool {
	segments := strings.Split(path, "/")
	for other, item := range paths {
		if other == path || !strings.Contains(other, "{") {
			continue
		}
		if _, ok := item.(map[string]any)[strings.ToLower(method)]; !ok {
			continue
		}
		pattern := strings.Split(other, "/")
		if len(pattern) != len(segments) {
			continue
		}
		match := true
		for i, seg := range pattern {
			if !strings.HasPrefix(seg, "{") && seg != segments[i] {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
