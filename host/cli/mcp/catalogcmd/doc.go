// Package catalogcmd owns 'hermes mcp catalog', 'install' and
// 'uninstall': the curated catalog as a table, and installing or removing
// one of its entries with its values, probe and approval.
package catalogcmd
