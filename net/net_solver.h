/* Rates (net/net_solver.c): max-min fairness by progressive filling, once per instant, for
 * the network's own files (net/net_model.c calls it; it calls the groups of
 * net/net_group.h, never the reverse). Not a public header. */
#ifndef NET_NET_SOLVER_H
#define NET_NET_SOLVER_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net_state.h"
#include "sim/err.h"

/* Sets up net->fill, the filling's heap of links (room for every link). Returns 0 or
 * SIM_ENOMEM. */
int sim_net_solver_init(sim_net *net);

/* The one recomputation of an instant, over the components of the links marked since the
 * last one. Returns 0 or the error of a flow that cannot be scheduled. */
int sim_net_solve(sim_net *net, sim_err *err);

/* Rates flow s, which just joined its links, if it is alone on every one of them (*rc: the
 * result); returns false, doing nothing, if it shares a link. */
bool sim_net_rate_alone(sim_net *net, uint32_t s, int *rc, sim_err *err);

/* The rate of flow s now (its group's if it is a member). */
double sim_net_flow_rate(const sim_net *net, uint32_t s);

/* Gives flow s the rate `rate_bps` from now on. */
int sim_net_set_rate(sim_net *net, uint32_t s, double rate_bps, sim_err *err);

/* Plain progressive filling of the component of `seed`. */
int sim_net_fill(sim_net *net, uint32_t seed, sim_err *err);

#endif
