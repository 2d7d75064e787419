package riverui

import (
	_ "embed"
	"encoding/json"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 document of the JSON API, served at
// /api/openapi.json. Its paths are relative to the server's URL, "/", which
// the Handler replaces with Config.Prefix when it has one.
//
//go:embed openapi.json
var openAPIDocument []byte

// openAPIFor is the document as served under prefix.
func openAPIFor(prefix string) ([]byte, error) {
	if prefix == "" {
		return openAPIDocument, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		return nil, err
	}
	servers, err := json.Marshal([]map[string]string{{"url": prefix, "description": "this server, under its prefix"}})
	if err != nil {
		return nil, err
	}
	doc["servers"] = servers
	return json.MarshalIndent(doc, "", "  ")
}

// serveOpenAPI answers GET /api/openapi.json.
func (h *Handler) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(h.openAPI)
}
