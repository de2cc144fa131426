// Command wsched is the command-line companion of the wsched scheduler.
//
//	wsched analyze [-json] [-check] FILE   explain a Perfetto trace written by wsched
//	wsched demo [flags]                     run the demo jobs and write traces
//	wsched simulate [flags] TRACE           replay a trace on other worker counts and policies
//
// Every subcommand takes -h. Exit status: 0 success, 1 failure (with a
// one-line error on stderr), 2 usage error.
package main
