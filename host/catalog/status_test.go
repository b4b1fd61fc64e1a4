package catalog

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/hermes-agent/hermes/host/config"
)

func TestRows(t *testing.T) {
	c, err := Read(fstest.MapFS{
		"alpha/manifest.yaml": {Data: []byte("manifest_version: 1\nname: alpha\ndescription: Alpha.\ntransport: {type: http, url: https://a.example/mcp}\n")},
		"beta/manifest.yaml":  {Data: []byte("manifest_version: 1\nname: beta\ndescription: Beta.\ntransport: {type: http, url: https://b.example/mcp}\n")},
		"delta/manifest.yaml": {Data: []byte("manifest_version: 1\nname: delta\ndescription: Delta.\ntransport: {type: http, url: https://d.example/mcp}\n")},
		"gamma/manifest.yaml": {Data: []byte("manifest_version: 2\nname: gamma\ndescription: Gamma.\n")},
		"zeta/manifest.yaml":  {Data: []byte("manifest_version: 1\nname: zeta\n")},
	}, "test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Servers: []*config.Server{
		{Name: "mine", Enabled: true, Command: "npx", Args: []string{"-y", "pkg@1.0.0"}},
		{Name: "beta", Enabled: false, Catalog: "beta"},
		{Name: "delta", Enabled: true, Catalog: "delta"},
		{Name: "alpha", Enabled: true, URL: "https://mine.example/mcp"},
		{Name: "off", Enabled: false, URL: "https://off.example/mcp"},
		{Name: "raw", Enabled: true, Raw: map[string]any{"command": "uvx", "args": []any{"x==1", 2}}},
	}}
	type row struct {
		Name, Status, Description  string
		Custom, Installed, Enabled bool
	}
	var got []row
	for _, r := range Rows(c, cfg) {
		got = append(got, row{r.Name, r.Status, r.Description, r.Custom, r.Installed, r.Enabled})
		if (r.Manifest == nil) != (r.Custom || r.Status == StatusNeedsNewer) {
			t.Errorf("%s: Manifest set = %v", r.Name, r.Manifest != nil)
		}
	}
	want := []row{
		{"alpha", StatusNameTaken, "Alpha.", false, false, false},
		{"beta", StatusInstalledDisabled, "Beta.", false, true, false},
		{"delta", StatusEnabled, "Delta.", false, true, true},
		{"gamma", StatusNeedsNewer, "Gamma.", false, false, false},
		{"mine", StatusCustomEnabled, "npx -y pkg@1.0.0", true, true, true},
		{"alpha", StatusCustomEnabled, "https://mine.example/mcp", true, true, true},
		{"off", StatusCustomDisabled, "https://off.example/mcp", true, true, false},
		{"raw", StatusCustomEnabled, "uvx x==1 2", true, true, true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Rows =\n%+v\nwant\n%+v", got, want)
	}
	if rows := Rows(nil, nil); len(rows) != 0 {
		t.Errorf("Rows(nil, nil) = %v", rows)
	}
}
