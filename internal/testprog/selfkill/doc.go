// Command selfkill is a sparkrpc program that the tests submit to check
// what submit says of an application killed (`submit --kill`) just before
// it returns successfully. Its application SelfKill brings up its driver,
// waits for an executor, kills its own application with this program's
// `submit --kill` (as an operator does), and returns nil at once.
package main
