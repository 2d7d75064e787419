package snippets

// What README.md's snippets use and leave to the reader: an application's
// pool, context and clients, its own workflow types and inputs. Each is
// declared here as the snippet expects it, and nothing else is: a snippet
// that needs a name missing here does not compile, and the test says so.

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// The application's pool, context, logger, HTTP mux and River settings.
var (
	ctx          context.Context
	pool, dbPool *pgxpool.Pool
	logger       *slog.Logger
	mux          *http.ServeMux
	queues       map[string]river.QueueConfig
	myWorkers    *river.Workers
	myMiddleware []rivertype.Middleware
	err          error
)

// The clients an earlier snippet made.
var (
	client, wf *workflow.Client
	schedules  *schedule.Client
)

// The quickstart's input and output.
type (
	Signup  struct{ Email string }
	Welcome struct {
		AccountID int64
		Message   string
	}
)

// mailer sends the welcome mail.
var mailer interface {
	Send(ctx context.Context, email string) (string, error)
}

// DigestInput is the digest's input.
type DigestInput struct{ Team string }

// Document is what the debounced index run takes.
type Document struct{ ID string }

// The application's workflow types, and what the snippets start them with.
var (
	Digest       *workflow.Definition[DigestInput, string]
	Reminder     *workflow.Definition[string, string]
	ProcessOrder *workflow.Definition[string, string]
	index        *workflow.Definition[Document, int]
	doc          Document
	syncFn       workflow.Func[string, int]
	callFn       workflow.Func[string, int]
	input        string
)

// otelriver stands in for github.com/riverqueue/rivercontrib/otelriver,
// which Tributary does not require: its NewMiddleware takes a config and
// returns a River middleware.
var otelriver interface {
	NewMiddleware(config *struct{}) rivertype.Middleware
}
