// The store's table of executor names, which its task rows refer to by
// index.

package webui

// intern returns the index of executor id in execIDs, adding it.
func (s *AppStore) intern(id, host string) int32 {
	if i, ok := s.execIndex[id]; ok {
		return i
	}
	if len(s.execIDs) >= max(minInternCompact, 2*s.internedKept) {
		s.compactExecutors()
	}
	i := int32(len(s.execIDs))
	s.execIDs, s.execHosts = append(s.execIDs, id), append(s.execHosts, host)
	s.execIndex[id] = i
	return i
}

// minInternCompact is how many executor names the store holds before it
// first drops those nothing refers to any more.
const minInternCompact = 1024

// compactExecutors drops the interned names of executors that neither an
// executor record nor a kept task row refers to (executors removed long
// ago, whose jobs were dropped), and renumbers the rest: without it an
// application whose executors come and go (dynamic allocation) would keep
// the name of every executor it ever had, and copy them all for every
// task page. It runs when the table has doubled since it last ran, so its
// pass over the rows is paid once per as many new executors as it kept.
// New slices are made: copies handed out earlier stay valid.
func (s *AppStore) compactExecutors() {
	used := make([]bool, len(s.execIDs))
	for id := range s.executors {
		if i, ok := s.execIndex[id]; ok {
			used[i] = true
		}
	}
	for _, j := range s.jobs {
		for k := range j.tasks {
			used[j.tasks[k].exec] = true
		}
		for k := range j.late {
			used[j.late[k].exec] = true
		}
	}
	remap := make([]int32, len(s.execIDs))
	ids, hosts := make([]string, 0, len(s.execIDs)/2), make([]string, 0, len(s.execIDs)/2)
	index := make(map[string]int32, len(s.execIDs)/2)
	for i, u := range used {
		if !u {
			continue
		}
		remap[i] = int32(len(ids))
		index[s.execIDs[i]] = int32(len(ids))
		ids, hosts = append(ids, s.execIDs[i]), append(hosts, s.execHosts[i])
	}
	for _, j := range s.jobs {
		for k := range j.tasks {
			j.tasks[k].exec = remap[j.tasks[k].exec]
		}
		for k := range j.late {
			j.late[k].exec = remap[j.late[k].exec]
		}
	}
	s.execIDs, s.execHosts, s.execIndex, s.internedKept = ids, hosts, index, len(ids)
}
