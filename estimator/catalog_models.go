package estimator

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
)

// The model catalog is data: one JSON record per model in models/, holding
// the fields of its Hugging Face config.json that matter, built through
// ParseConfig exactly as a user's pasted file is (docs/estimator.md#1-models-and-gpus).
//
//go:embed models/*.json
var modelFiles embed.FS

// modelRecord is one file of models/.
type modelRecord struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	HFID string `json:"hf_id"`
	// Published is the total the model card or Hugging Face page states
	// ("8.03B"), and PublishedSource where it is stated.
	Published       string `json:"published"`
	PublishedSource string `json:"published_source"`
	// Params is the exact total when a source states one (0: only the
	// rounded Published is known). The catalog test checks both.
	Params int64 `json:"params,omitempty"`
	// Note is shown with the model (e.g. what a vision model's text-only
	// estimate leaves out).
	Note   string          `json:"note,omitempty"`
	Config json.RawMessage `json:"config"`
}

// loadCatalog parses every record of models/ through ParseConfig.
func loadCatalog() ([]Model, []modelRecord, error) {
	entries, err := modelFiles.ReadDir("models")
	if err != nil {
		return nil, nil, err
	}
	var ms []Model
	var recs []modelRecord
	for _, e := range entries {
		data, err := modelFiles.ReadFile(path.Join("models", e.Name()))
		if err != nil {
			return nil, nil, err
		}
		var rec modelRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			return nil, nil, fmt.Errorf("models/%s: %v", e.Name(), err)
		}
		m, err := ParseConfig(rec.Config)
		if err != nil {
			return nil, nil, fmt.Errorf("models/%s: %v", e.Name(), err)
		}
		m.ID, m.Name, m.HFID = rec.ID, rec.Name, rec.HFID
		m.Published, m.PublishedSource = rec.Published, rec.PublishedSource
		if rec.Note != "" {
			m.Notes = append(m.Notes, rec.Note)
		}
		ms = append(ms, m)
		recs = append(recs, rec)
	}
	return ms, recs, nil
}

// catalogModels returns the model catalog sorted by ID. It is parsed on
// first use, not at package initialisation: programs that import the
// package without reading the catalog (the snapshot worker) do not pay for
// it at start.
var catalogModels = sync.OnceValue(func() []Model {
	ms, _, err := loadCatalog()
	if err != nil {
		panic("estimator: the embedded model catalog is broken: " + err.Error())
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	return ms
})

// Models returns the model catalog sorted by ID. The slice is a copy.
func Models() []Model {
	cat := catalogModels()
	ms := make([]Model, len(cat))
	copy(ms, cat)
	return ms
}

// LookupModel finds a catalog model by ID (case-insensitive).
func LookupModel(id string) (Model, bool) {
	for _, m := range catalogModels() {
		if strings.EqualFold(m.ID, id) {
			return m, true
		}
	}
	return Model{}, false
}
