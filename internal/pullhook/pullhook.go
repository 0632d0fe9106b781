// Package pullhook carries the machinery of package pull that package
// ordered needs, but users do not: making a *pull.ConsumeContext, the one
// consume-context type of both packages.
//
// Package pull fills the variable while it initialises. It is typed any
// because this package cannot name pull's types (pull imports it); package
// ordered gives it its real type when it initialises, which Go runs after
// pull's initialisation. Nothing but pull and ordered uses this package.
package pullhook

// NewConsumeContext is pull's newConsumeContext.
var NewConsumeContext any
