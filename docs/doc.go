// Package docs holds OOMScope's design notes (the Markdown files beside this
// one). It has no code: its test checks that every docs/<file>.md#<section>
// a Go comment cites names a heading that exists, that the Markdown links
// between the notes and the README resolve, and that no comment cites a
// document outside the repository.
package docs
