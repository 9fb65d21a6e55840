// What `morula angiogenesis` builds before it steps: its settings (every key of the configuration file,
// the model's values as defaults), read from a file or from JSON text; the parameters, box, initial tumour
// cells and vessel tubes made from them; the angiogenic switch the run applies before each step; and a
// frame of the state as the snapshots store it. The command and the Python module (python/) both start a
// run from here, so that the same configuration gives the same run in both, bit for bit.
#ifndef MORULA_APPS_ANGIOSETUP_HPP
#define MORULA_APPS_ANGIOSETUP_HPP

#include <morula/angio/AngioParameters.hpp>
#include <morula/angio/TumourCells.hpp>
#include <morula/angio/VesselTubes.hpp>
#include <morula/core/Box.hpp>
#include <morula/io/AngioSnapshots.hpp>

#include <string>
#include <vector>

namespace morula::app
{
// Every key of the configuration file (docs/models/angiogenesis.md). Model parameters use the names of
// the fields of angio::AngioParameters and default to its values.
struct AngioSettings
{
    std::string precision = "double";
    double box[3] = { 400, 400, 400 };
    double tumour_centre[3] = { 220, 200, 200 };
    double tumour_radius = 20;
    double cell_radius = 5;
    struct Vessel
    {
        std::vector<double> points;
        double radius = 5;
    };
    std::vector<Vessel> vessels;
    long steps = 1000;
    long output_every = 100;
    long seed = 1;
    double angiogenic_switch = 0; // h: sprouting from this time on (when sprouting is true)
    std::string output = "angiogenesis";
    bool progress = true;
    angio::AngioParameters p;
};

//! Reads the keys the configuration file `path` holds into `s` (the others keep their values); throws
//! core::InputError naming the file, key and value.
void read_angiogenesis_config( const std::string& path, AngioSettings& s );
//! The same for JSON text in memory, named `name` in errors.
void read_angiogenesis_config_text( const std::string& json, const std::string& name, AngioSettings& s );

//! What a run starts from, on the host; every check made (errors name `where` and the key).
struct AngioStart
{
    //! The model's parameters: the seed set, sprouting off until the switch when one is configured.
    angio::AngioParameters parameters;
    //! Whether the configuration wants sprouting at all (from the start, or from the angiogenic switch).
    bool sprouting = false;
    angio::HostCells cells;
    angio::HostTubes tubes;
};
AngioStart make_angiogenesis_start( const AngioSettings& s, const std::string& where );

//! The closed box [0, box] of the settings.
template <class Scalar>
core::Box<Scalar> angiogenesis_box( const AngioSettings& s )
{
    return core::Box<Scalar>( { 0, 0, 0 }, { Scalar( s.box[0] ), Scalar( s.box[1] ), Scalar( s.box[2] ) },
                              core::Boundary::closed );
}

/*!
  The angiogenic switch: a run that wants sprouting from `angiogenic_switch` hours on turns it on before
  the first step that starts at or past that time. The model's own parameters say whether it happened,
  so a restarted model needs nothing more.
*/
class AngiogenicSwitch
{
  public:
    AngiogenicSwitch( const AngioSettings& s, const AngioStart& start )
        : m_wanted( start.sprouting )
        , m_at( s.angiogenic_switch )
    {
    }
    template <class Model>
    bool pending( const Model& m ) const
    {
        return m_wanted && !m.parameters().vessels.sprouting;
    }
    //! Call before every step.
    template <class Model>
    void before_step( Model& m ) const
    {
        if ( pending( m ) && m.time() >= m_at )
            m.set_sprouting( true );
    }

  private:
    bool m_wanted;
    double m_at;
};

//! Host copies of the model's cells and tubes as one snapshot frame (io::AngioSnapshotWriter).
template <class Model>
io::AngioFrame angiogenesis_frame( const Model& m )
{
    const auto c = m.cells().to_host();
    const auto t = m.tubes().to_host();
    io::AngioFrame f;
    f.step = m.steps_done();
    f.time = m.time();
    f.cell_positions = c.position;
    f.cell_radius = c.radius;
    f.cell_age = c.age;
    f.cell_oxygen = c.oxygen;
    f.cell_taf = c.taf;
    f.cell_pressure = c.pressure;
    f.cell_state = c.state;
    f.cell_id = c.id;
    f.tube_end_a = t.end_a;
    f.tube_end_b = t.end_b;
    f.tube_radius_a = t.radius_a;
    f.tube_radius_b = t.radius_b;
    f.tube_flow = t.flow;
    f.tube_blood_oxygen = t.blood_oxygen;
    f.tube_delivered = t.delivered;
    f.tube_taf = t.taf;
    f.tube_parent = t.parent;
    f.tube_flags = t.flags;
    f.tube_id = t.id;
    return f;
}
} // namespace morula::app

#endif
