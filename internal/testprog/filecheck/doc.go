// Command filecheck is a sparkrpc program that the tests submit to check
// that files reach executors. Its application FileCheck takes
// [--add PATH]... NAME...: the driver adds each PATH (Driver.AddFile), then
// a job of four tasks per executor reads each NAME from the executor's
// files folder (TaskContext.File). It prints one line "NAME: CONTENTS" per
// name, and "read on N executors", and fails if any task could not read a
// file.
package main
