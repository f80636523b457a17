package resourcemanager

// MaxStagedResources is maxStagedResources, for the tests of the package's
// users' view.
const MaxStagedResources = maxStagedResources
