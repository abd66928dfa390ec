// Package deploy_test checks the deployment files: every YAML file
// parses, one pinned Typesense version is used everywhere, and the
// compose file, the Kubernetes manifests, docent's configs and the
// systemd unit agree on ports, node lists, mount paths and environment
// variable names.
package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/docent-hq/docent/config"
)

// docs parses every YAML document in path.
func docs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []map[string]any
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if m != nil {
			out = append(out, m)
		}
	}
}

// get walks a parsed document by keys (string) and indexes (int).
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func str(v any) string { return fmt.Sprint(v) }

// kind returns the first manifest of kind named name.
func kind(t *testing.T, ms []map[string]any, k, name string) map[string]any {
	t.Helper()
	for _, m := range ms {
		if m["kind"] == k && get(m, "metadata", "name") == name {
			return m
		}
	}
	t.Fatalf("no %s %s", k, name)
	return nil
}

// envOf returns a container's env as name -> value (or "secret:NAME/KEY").
func envOf(c any) map[string]string {
	out := map[string]string{}
	for _, e := range get(c, "env").([]any) {
		name := str(get(e, "name"))
		if ref := get(e, "valueFrom", "secretKeyRef"); ref != nil {
			out[name] = "secret:" + str(get(ref, "name")) + "/" + str(get(ref, "key"))
		} else {
			out[name] = str(get(e, "value"))
		}
	}
	return out
}

// mountPath is where container c mounts volume.
func mountPath(c any, volume string) string {
	for _, m := range get(c, "volumeMounts").([]any) {
		if get(m, "name") == volume {
			return str(get(m, "mountPath"))
		}
	}
	return ""
}

// loadDocent validates a docent config as docent would, with the key set.
func loadDocent(t *testing.T, text string) config.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "docent.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TYPESENSE_API_KEY": "k",
		"DOCENT_ADMIN_PASSWORD_HASH": "$2a$10$abcdefghijklmnopqrstuuFZJJlZ8vQ6Hq8p4QoG7H6bYVbq8yZ4S"}
	cfg, err := config.Load(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, config.Builtin())
	if err != nil {
		t.Fatalf("docent config: %v", err)
	}
	if len(cfg.Auth.Admins) == 0 {
		t.Fatal("docent config: no console admin, so serving on :8080 would refuse to start")
	}
	if cfg.Index.Backend != config.BackendTypesense || cfg.Index.Typesense.APIKey != "k" {
		t.Fatalf("docent config: backend %q, key from ${TYPESENSE_API_KEY}: %v", cfg.Index.Backend, cfg.Index.Typesense.APIKey == "k")
	}
	return cfg
}

// node is one host:peering:api entry of a Typesense nodes file.
type node struct {
	host      string
	peer, api int
}

func parseNodes(t *testing.T, s string) []node {
	t.Helper()
	var out []node
	for _, e := range strings.Split(strings.TrimSpace(s), ",") {
		p := strings.Split(e, ":")
		if len(p) != 3 {
			t.Fatalf("nodes entry %q is not host:peering_port:api_port", e)
		}
		peer, err1 := strconv.Atoi(p[1])
		api, err2 := strconv.Atoi(p[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("nodes entry %q has bad ports", e)
		}
		out = append(out, node{p[0], peer, api})
	}
	return out
}

// apiURLs are the nodes' API endpoints, as docent's config lists them.
func apiURLs(nodes []node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("http://%s:%d", n.host, n.api))
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var imageRE = regexp.MustCompile(`typesense/typesense:([A-Za-z0-9._-]+)`)

func TestOnePinnedTypesenseVersion(t *testing.T) {
	tags := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		for _, m := range imageRE.FindAllStringSubmatch(string(b), -1) {
			tags[m[1]] = append(tags[m[1]], path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags) != 1 {
		t.Fatalf("Typesense image tags: %v, want exactly one", tags)
	}
	for tag, files := range tags {
		if !regexp.MustCompile(`^\d+\.\d+$`).MatchString(tag) {
			t.Errorf("tag %q is not a pinned version", tag)
		}
		for _, want := range []string{"compose.yaml", filepath.Join("k8s", "typesense.yaml"), "README.md"} {
			if !slices.Contains(files, want) {
				t.Errorf("%s does not name typesense/typesense:%s", want, tag)
			}
		}
	}
}

func TestCompose(t *testing.T) {
	c := docs(t, "compose.yaml")[0]
	services := get(c, "services").(map[string]any)
	nodes := parseNodes(t, readFile(t, "typesense-nodes"))
	var tsServices []string
	for name, s := range services {
		if strings.HasPrefix(str(get(s, "image")), "typesense/") {
			tsServices = append(tsServices, name)
		}
	}
	slices.Sort(tsServices)
	if len(tsServices) != 3 || len(nodes) != 3 {
		t.Fatalf("typesense services %v, nodes %v: want 3 of each", tsServices, nodes)
	}
	for i, name := range tsServices {
		s := services[name]
		env := get(s, "environment").(map[string]any)
		if nodes[i].host != name || str(nodes[i].peer) != str(env["TYPESENSE_PEERING_PORT"]) || str(nodes[i].api) != str(env["TYPESENSE_API_PORT"]) {
			t.Errorf("service %s (ports %v/%v) does not match nodes entry %+v", name, env["TYPESENSE_PEERING_PORT"], env["TYPESENSE_API_PORT"], nodes[i])
		}
		vols := fmt.Sprint(get(s, "volumes"))
		if !strings.Contains(vols, name+":/data") || str(env["TYPESENSE_DATA_DIR"]) != "/data" {
			t.Errorf("service %s has no persistent volume at its data dir: %s", name, vols)
		}
		if !strings.Contains(vols, "./typesense-nodes:"+str(env["TYPESENSE_NODES"])) {
			t.Errorf("service %s: TYPESENSE_NODES %v is not where the nodes file is mounted (%s)", name, env["TYPESENSE_NODES"], vols)
		}
		if !strings.Contains(fmt.Sprint(get(s, "healthcheck", "test")), "/health") {
			t.Errorf("service %s has no health check on /health", name)
		}
		if !strings.Contains(str(env["TYPESENSE_API_KEY"]), "${TYPESENSE_API_KEY") {
			t.Errorf("service %s does not take the key from TYPESENSE_API_KEY", name)
		}
		if !slices.Contains(keys(get(c, "volumes")), name) {
			t.Errorf("volume %s is not declared", name)
		}
	}

	d := services["docent"]
	env := get(d, "environment").(map[string]any)
	if !strings.Contains(str(env["TYPESENSE_API_KEY"]), "${TYPESENSE_API_KEY") {
		t.Error("docent does not get TYPESENSE_API_KEY")
	}
	if !strings.Contains(fmt.Sprint(get(d, "volumes")), "./docent.yaml:"+str(env["DOCENT_CONFIG"])) {
		t.Errorf("DOCENT_CONFIG %v is not where docent.yaml is mounted", env["DOCENT_CONFIG"])
	}
	for _, name := range tsServices {
		if get(d, "depends_on", name, "condition") != "service_healthy" {
			t.Errorf("docent does not wait for %s to be healthy", name)
		}
	}
	cfg := loadDocent(t, readFile(t, "docent.yaml"))
	if want := apiURLs(nodes); !slices.Equal(cfg.Index.Typesense.Nodes, want) {
		t.Errorf("docent.yaml nodes %v, want the compose API endpoints %v", cfg.Index.Typesense.Nodes, want)
	}
	if port := ":" + strings.Split(str(get(d, "ports", 0)), ":")[1]; cfg.Server.Addr != port {
		t.Errorf("docent listens on %s, compose publishes %s", cfg.Server.Addr, port)
	}
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestKubernetes(t *testing.T) {
	var all []map[string]any
	for _, f := range []string{"secrets.yaml", "typesense.yaml", "docent.yaml"} {
		all = append(all, docs(t, filepath.Join("k8s", f))...)
	}
	secret := kind(t, all, "Secret", "docent-secrets")
	sts := kind(t, all, "StatefulSet", "typesense")
	headless := kind(t, all, "Service", str(get(sts, "spec", "serviceName")))
	if get(headless, "spec", "clusterIP") != "None" {
		t.Error("the StatefulSet's service is not headless")
	}
	ts := get(sts, "spec", "template", "spec", "containers", 0)
	ports := map[string]string{}
	for _, p := range get(ts, "ports").([]any) {
		ports[str(get(p, "name"))] = str(get(p, "containerPort"))
	}
	for _, p := range get(headless, "spec", "ports").([]any) {
		if ports[str(get(p, "targetPort"))] != str(get(p, "port")) {
			t.Errorf("headless service port %v does not match the container's", p)
		}
	}
	env := envOf(ts)
	if env["TYPESENSE_PEERING_PORT"] != ports["peering"] || env["TYPESENSE_API_PORT"] != ports["api"] {
		t.Errorf("Typesense env ports %s/%s, container ports %v", env["TYPESENSE_PEERING_PORT"], env["TYPESENSE_API_PORT"], ports)
	}
	// Same Typesense settings as the compose file.
	compose := get(docs(t, "compose.yaml")[0], "services", "typesense-1", "environment").(map[string]any)
	for name := range compose {
		if _, ok := env[name]; !ok {
			t.Errorf("k8s Typesense lacks %s, which compose sets", name)
		}
	}
	for name, v := range env {
		if ref, ok := strings.CutPrefix(v, "secret:docent-secrets/"); ok {
			if get(secret, "stringData", ref) == nil {
				t.Errorf("%s refers to missing secret key %s", name, ref)
			}
		}
	}
	if get(ts, "readinessProbe", "httpGet", "path") != "/health" {
		t.Error("Typesense readiness is not /health")
	}
	if get(sts, "spec", "volumeClaimTemplates", 0, "metadata", "name") != "data" {
		t.Error("no persistent volume claim template for data")
	}

	cm := kind(t, all, "ConfigMap", "typesense-nodes")
	nodes := parseNodes(t, str(get(cm, "data", "nodes")))
	replicas, _ := strconv.Atoi(str(get(sts, "spec", "replicas")))
	if len(nodes) != replicas || replicas < 3 {
		t.Fatalf("%d nodes for %d replicas", len(nodes), replicas)
	}
	for i, n := range nodes {
		host := fmt.Sprintf("typesense-%d.%s", i, get(headless, "metadata", "name"))
		if n.host != host || str(n.peer) != ports["peering"] || str(n.api) != ports["api"] {
			t.Errorf("nodes entry %+v, want %s:%s:%s", n, host, ports["peering"], ports["api"])
		}
	}
	nodesMount := mountPath(ts, "nodes")
	if env["TYPESENSE_NODES"] != nodesMount+"/nodes" {
		t.Errorf("TYPESENSE_NODES %s, ConfigMap mounted at %s", env["TYPESENSE_NODES"], nodesMount)
	}

	dep := kind(t, all, "Deployment", "docent")
	dc := get(dep, "spec", "template", "spec", "containers", 0)
	if get(dc, "readinessProbe", "httpGet", "path") != "/readyz" || get(dc, "livenessProbe", "httpGet", "path") != "/healthz" {
		t.Error("docent probes are not /readyz (readiness) and /healthz (liveness)")
	}
	denv := envOf(dc)
	if denv["TYPESENSE_API_KEY"] != env["TYPESENSE_API_KEY"] {
		t.Errorf("docent's key %s, Typesense's %s", denv["TYPESENSE_API_KEY"], env["TYPESENSE_API_KEY"])
	}
	cfgMount := mountPath(dc, "config")
	if denv["DOCENT_CONFIG"] != cfgMount+"/docent.yaml" {
		t.Errorf("DOCENT_CONFIG %s, config mounted at %s", denv["DOCENT_CONFIG"], cfgMount)
	}
	cfg := loadDocent(t, str(get(kind(t, all, "ConfigMap", "docent-config"), "data", "docent.yaml")))
	if want := apiURLs(nodes); !slices.Equal(cfg.Index.Typesense.Nodes, want) {
		t.Errorf("docent nodes %v, want %v", cfg.Index.Typesense.Nodes, want)
	}
	httpPort := str(get(dc, "ports", 0, "containerPort"))
	if cfg.Server.Addr != ":"+httpPort {
		t.Errorf("docent listens on %s, container port %s", cfg.Server.Addr, httpPort)
	}
}

func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("systemd", "docent.service"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]map[string][]string{}
	var cur string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = line[1 : len(line)-1]
			sections[cur] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == "" {
				t.Fatalf("line %d: %q is not key=value in a section", i+1, line)
			}
			sections[cur][k] = append(sections[cur][k], v)
		}
	}
	for _, s := range []string{"Unit", "Service", "Install"} {
		if sections[s] == nil {
			t.Errorf("no [%s] section", s)
		}
	}
	svc := sections["Service"]
	if exec := strings.Fields(strings.Join(svc["ExecStart"], "")); len(exec) < 2 || exec[1] != "serve" {
		t.Errorf("ExecStart = %v, want docent serve", svc["ExecStart"])
	}
	env := strings.Join(svc["Environment"], " ")
	for _, name := range []string{"DOCENT_CONFIG=", "DOCENT_DATA="} {
		if !strings.Contains(env, name) {
			t.Errorf("unit does not set %s", name)
		}
	}
	if len(svc["EnvironmentFile"]) == 0 {
		t.Error("no EnvironmentFile for secrets such as TYPESENSE_API_KEY")
	}
}
