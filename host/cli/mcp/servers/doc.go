// Package servers owns the commands that look at and change configured
// servers: 'list', 'get', 'remove', 'configure', 'enable', 'disable',
// 'approve', 'reject', 'reset-project-choices' and 'logs'.
package servers
