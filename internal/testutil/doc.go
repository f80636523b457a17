// Package testutil holds helpers shared by sparkrpc's tests. It is internal:
// nothing in it is a promise to users.
package testutil
