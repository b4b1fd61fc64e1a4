package cli

// The run's environment (Options.Env) reaches everything below the command
// line that reads one through the run's composition root (app.Factory):
// config's ${VAR} expansion and HERMES_SAFE_MODE, roots:, mcp_serve:,
// approval: and model:, the ~ of a catalog entry's sandbox at install, the
// safe environment a stdio server inherits and the plugins'. Nothing a
// command does reads the process environment, so commands run side by side
// in one process (the tests do) each see their own.
