// Package intervals keeps sets of integers as sorted ranges, so that values
// that arrive in order cost one range however many they are.
package intervals
