package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

func TestDockerfile(t *testing.T) {
	t.Parallel()

	// What TestMain's build does not show: the stages around it.
	dockerfile, err := os.ReadFile(filepath.Join(moduleRoot, "Dockerfile"))
	require.NoError(t, err)
	text := string(dockerfile)
	require.Regexp(t, `(?m)^ARG BUILDER=golang:1\.\d+`, text)
	require.Regexp(t, `(?m)^ARG RUNTIME=gcr\.io/distroless/static`, text, "the final stage runs the static binary alone")
	require.Regexp(t, `(?m)^FROM \$\{BUILDER\} AS build$`, text)
	require.Regexp(t, `(?m)^FROM \$\{RUNTIME\}$`, text)
	require.Regexp(t, `(?m)^USER 65532:65532$`, text, "the binary runs as a non-root user")
	require.Regexp(t, `(?m)^ENTRYPOINT \["/usr/local/bin/tributary"\]$`, text)
	require.Regexp(t, `(?m)^CMD \["serve"\]$`, text)

	run, err := dockerfileBuild()
	require.NoError(t, err)
	require.Contains(t, run, "CGO_ENABLED=0 ")
	require.Contains(t, run, " ./cmd/tributary")

	// The build context leaves out .git, which is why the linker sets the
	// version and commit.
	ignore, err := os.ReadFile(filepath.Join(moduleRoot, ".dockerignore"))
	require.NoError(t, err)
	require.Contains(t, strings.Fields(string(ignore)), ".git")
}

// composeFile is the part of compose.yaml the tests read.
type composeFile struct {
	Services map[string]struct {
		Build       any               `yaml:"build"`
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Ports []string `yaml:"ports"`
	} `yaml:"services"`
}

func TestComposeFile(t *testing.T) {
	t.Parallel()

	path := filepath.Join(moduleRoot, "compose.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var compose composeFile
	require.NoError(t, yaml.Unmarshal(data, &compose))

	// Postgres, then the migrations, then serve.
	require.Contains(t, compose.Services, "postgres")
	migrate, serve := compose.Services["migrate"], compose.Services["serve"]
	require.Equal(t, "service_healthy", migrate.DependsOn["postgres"].Condition)
	require.Equal(t, "service_completed_successfully", serve.DependsOn["migrate"].Condition)
	for name, svc := range map[string]struct {
		args []string
		url  string
	}{"migrate": {migrate.Command, migrate.Environment["DATABASE_URL"]}, "serve": {serve.Command, serve.Environment["DATABASE_URL"]}} {
		// The image's binary takes the service's command line: its flags
		// parse (--help prints the help once they have).
		require.NotEmpty(t, svc.args, name)
		tributary(t, append(slices.Clone(svc.args), "--help")...)
		require.Regexp(t, `^postgres://[^@]+@postgres:5432/`, svc.url, "%s reaches the postgres service", name)
	}
	require.Equal(t, []string{"migrate", "up"}, migrate.Command)
	require.Equal(t, "serve", serve.Command[0])
	require.Contains(t, serve.Ports, "127.0.0.1:8080:8080", "serve is published on the host's loopback only")

	// Compose itself validates the file where it is installed: the docker
	// compose plugin, or the older docker-compose.
	validate := func(name string, args ...string) bool {
		bin, err := exec.LookPath(name)
		if err != nil {
			return false
		}
		if name == "docker" {
			if err := exec.CommandContext(t.Context(), bin, "compose", "version").Run(); err != nil {
				return false
			}
		}
		out, err := exec.CommandContext(t.Context(), bin, append(args, "-f", path, "config", "--quiet")...).CombinedOutput()
		require.NoError(t, err, "%s %s config: %s", name, strings.Join(args, " "), out)
		return true
	}
	if !validate("docker", "compose") && !validate("docker-compose") {
		t.Log("neither docker compose nor docker-compose is installed: compose.yaml is checked by the assertions above only")
	}
}

// docker runs the docker client with args and returns its combined
// output.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "docker", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func TestDockerImage(t *testing.T) {
	t.Parallel()

	if _, err := exec.LookPath("docker"); err != nil {
		t.Skip("docker is not installed: the image is not built here (TestDockerfile and TestMain's build check the Dockerfile without it)")
	}
	infoCtx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if out, err := docker(infoCtx, "info", "--format", "{{.ServerVersion}}"); err != nil {
		t.Skipf("no docker daemon answers (docker info: %v: %s): the image is not built here", err, out)
	}

	// The base images must be there or be pulled: a machine that reaches
	// no registry cannot build the image, whatever the Dockerfile says.
	for _, arg := range []string{"BUILDER", "RUNTIME"} {
		image := dockerfileArg(t, arg)
		if _, err := docker(t.Context(), "image", "inspect", image); err == nil {
			continue
		}
		pullCtx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		out, err := docker(pullCtx, "pull", image)
		cancel()
		if err != nil {
			t.Skipf("the base image %s cannot be pulled (%v: %s): the image is not built here", image, err, lastLine(out))
		}
	}

	tag := "tributary-test:" + strings.ToLower(rand.Text()[:12])
	buildCtx, cancel := context.WithTimeout(t.Context(), 15*time.Minute)
	defer cancel()
	out, err := docker(buildCtx, "build", "--build-arg", "VERSION="+testVersion, "--build-arg", "COMMIT="+testCommit, "-t", tag, moduleRoot)
	require.NoError(t, err, out)
	t.Cleanup(func() { _, _ = docker(context.Background(), "image", "rm", "--force", tag) })

	user, err := docker(t.Context(), "image", "inspect", "--format", "{{.Config.User}}", tag)
	require.NoError(t, err, user)
	require.Equal(t, "65532:65532", user)

	out, err = docker(t.Context(), "run", "--rm", "--network", "none", tag, "version")
	require.NoError(t, err, out)
	require.Regexp(t, `^tributary `+regexp.QuoteMeta(testVersion)+`\n  commit: `+testCommit+`\n  river:  v0\.\d+\.\d+\n`, out)
}

// dockerfileArg is the default of the Dockerfile's ARG name.
func dockerfileArg(t *testing.T, name string) string {
	t.Helper()

	dockerfile, err := os.ReadFile(filepath.Join(moduleRoot, "Dockerfile"))
	require.NoError(t, err)
	match := regexp.MustCompile(`(?m)^ARG ` + name + `=(\S+)$`).FindSubmatch(dockerfile)
	require.NotNil(t, match, "the Dockerfile has no ARG %s=…", name)
	return string(match[1])
}

// lastLine is the last line of out, for a short message.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return fmt.Sprint(lines[len(lines)-1])
}
