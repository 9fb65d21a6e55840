#ifndef MORULA_ANGIO_DETAIL_PHASEACCESS_HPP
#define MORULA_ANGIO_DETAIL_PHASEACCESS_HPP
/*!
  \file PhaseAccess.hpp
  \brief TumourAngiogenesis' phases one by one, for tests that check a phase alone and benchmarks that time
  one. Internal, no stable interface: the model keeps its phases private (a step runs them in order through
  core::ModelDriver) and names this struct a friend.
*/

namespace morula::angio::detail
{
struct PhaseAccess
{
    // clang-format off
    template <class Model, class Exec> static void prepare_step( Model& m, const Exec& e ) { m.prepare_step( e ); }
    template <class Model, class Exec> static bool build_grid( Model& m, const Exec& e ) { return m.build_grid( e ); }
    template <class Model, class Exec> static void interact_cells( Model& m, const Exec& e ) { m.interact_cells( e ); }
    template <class Model, class Exec> static void update_blood_flow( Model& m, const Exec& e ) { m.update_blood_flow( e ); }
    template <class Model, class Exec> static void interact_tubes( Model& m, const Exec& e ) { m.interact_tubes( e ); }
    template <class Model, class Exec>
    static void interact_tubes_and_cells( Model& m, const Exec& e ) { m.interact_tubes_and_cells( e ); }
    template <class Model, class Exec> static void exchange( Model& m, const Exec& e ) { m.exchange( e ); }
    template <class Model, class Exec> static void exchange_replayed( Model& m, const Exec& e ) { m.exchange_replayed( e ); }
    template <class Model, class Exec> static void move( Model& m, const Exec& e ) { m.move( e ); }
    template <class Model, class Exec> static void grow_vessels( Model& m, const Exec& e ) { m.grow_vessels( e ); }
    template <class Model, class Exec> static void advance_life_cycle( Model& m, const Exec& e ) { m.advance_life_cycle( e ); }
    template <class Model, class Exec, class Report>
    static void finish_step( Model& m, const Exec& e, Report& r ) { m.finish_step( e, r ); }
    template <class Model, class Exec> static int remove_lysed( Model& m, const Exec& e ) { return m.remove_lysed( e ); }
    // clang-format on
};
} // namespace morula::angio::detail

#endif
