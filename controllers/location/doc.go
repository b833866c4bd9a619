// Package location holds the location controller: it counts each Location's SyncTargets
// (instances, and the available ones: Ready and not cordoned or evicting) and reports with
// the SelectorValid condition whether the instance selector parses.
package location
